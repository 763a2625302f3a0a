/* dtype.c - the element type table (dtype.h) by number and by name. */
#include "dtype.h"

#include <string.h>

static const struct {
	const char *name;
	int size;
	int f8;
} dtypes[] = {
#define X(id, name, size, f8) {name, size, f8},
    DTYPES(X)
#undef X
};

const char *
dtype_name(DType t)
{
	return (unsigned)t < DT_COUNT ? dtypes[t].name : "?";
}

int
dtype_size(DType t)
{
	return (unsigned)t < DT_COUNT ? dtypes[t].size : 0;
}

int
dtype_is_f8(DType t)
{
	return (unsigned)t < DT_COUNT && dtypes[t].f8;
}

Fp8Format
dtype_fp8_format(DType t)
{
	return t == DT_F8_F152 ? FP8_F152 : FP8_F143;
}

int
dtype_from_name(const char *s, size_t len)
{
	for (int i = 0; i < DT_COUNT; i++)
		if (strlen(dtypes[i].name) == len &&
		    !memcmp(dtypes[i].name, s, len))
			return i;
	return -1;
}
