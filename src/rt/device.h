/*
 * device.h - the runtime's device handle and the helpers runtime.c shares
 * with package.c (internal to src/rt/).
 *
 * A device is in one of three states: EMPTY (nothing loaded), LOADED (at
 * least one image or a package, not yet run) and RAN. Loading in RAN
 * resets the backend first (rt_fresh), so that every run starts from
 * fresh tiles, as a new program on hardware would. A package occupies
 * tiles 0..pkg->tiles-1 and holds the tensor table that ipu_write_tensor
 * and ipu_read_tensor use.
 */
#ifndef IPU_RT_DEVICE_H
#define IPU_RT_DEVICE_H

#include "../pkg/pkg.h"
#include "backend.h"

/* An image shared by the tiles it was loaded on. */
typedef struct {
	TileImage img;
	char *name; /* for messages */
	uint32_t refs;
} RtImage;

typedef enum { ST_EMPTY, ST_LOADED, ST_RAN } RtState;

struct ipu_device {
	char *name;
	const RtBackend *ops;
	void *be;
	RtConfig cfg;
	RtImage **img;  /* by tile, NULL if none */
	Package *pkg;   /* the loaded package, or NULL */
	char *pkg_name; /* for messages */
	RtState state;
	ipu_progress_fn progress; /* ipu_set_progress */
	void *progress_ctx;
};

/* Every entry point starts with this: a scratch error when the caller
 * passed none, cleared so that success leaves IPU_ERR_NONE. */
#define ERR_BEGIN(err)                                                         \
	ipu_error scratch_err_;                                                \
	if (!(err))                                                            \
		(err) = &scratch_err_;                                         \
	rt_error_clear(err)

void rt_error_clear(ipu_error *err);
/* IPU_ERR_ARGUMENT naming fn unless dev is non-NULL (and tile in range). */
int rt_check_dev(const ipu_device *dev, const char *fn, ipu_error *err);
/* Read a whole input file for `fn` (runtime.c). */
int rt_read_file(const char *fn, const char *path, uint8_t **data, size_t *len,
                 ipu_error *err);
/* In state RAN, replace the backend by a fresh one and drop every image
 * and the package; otherwise nothing. */
int rt_fresh(ipu_device *dev, ipu_error *err);

/* package.c: name the kernel a faulting pc of a package tile lies in. */
void rt_package_fault_symbol(const ipu_device *dev, ipu_error *err);

#endif
