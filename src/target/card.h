/*
 * card.h - the C600 card's host interface as the kernel driver exposes it:
 * the configuration BAR's registers, the driver's ioctls, the ICU mailbox,
 * the tile debug interface (TDI) and the boot frames. The numbers live in
 * card.def, each with its source; DECISIONs are what the card model assumes
 * where the behaviour is not public (docs/hardware.md).
 */
#ifndef IPU_CARD_H
#define IPU_CARD_H

#include <stdint.h>

enum {
#define C(name, value, src) CARD_##name = (value),
#define D(name, value, why) CARD_##name = (value),
#define I(name, nr, dir, size, src) CARD_NR_##name = (nr),
#include "card.def"
#undef C
#undef D
#undef I
};

/* Linux's _IOC layout (asm-generic/ioctl.h), as the driver's codes use it. */
#define CARD_IOC(dir, nr, size)                                                \
	((unsigned long)(((uint32_t)(dir) << 30) | ((uint32_t)(size) << 16) |  \
	                 ((uint32_t)CARD_IOC_MAGIC << 8) | (uint32_t)(nr)))

/* The ioctl request codes (3 << 30 does not fit an enum). */
#define C(name, value, src)
#define D(name, value, why)
#define I(name, nr, dir, size, src)                                            \
	static const unsigned long CARD_IOCTL_##name = CARD_IOC(dir, nr, size);
#include "card.def"
#undef C
#undef D
#undef I

/* The argument of BUFFER_ATTACH: a host buffer the card may reach. */
typedef struct {
	uint32_t index;
	uint32_t size;
	uint64_t address; /* the buffer's user address */
} CardAttach;

/* One ICU mailbox message, and the argument of MAILBOX (both pointers). */
typedef struct {
	uint32_t w[CARD_MAILBOX_WORDS];
} CardMail;
typedef struct {
	const CardMail *sent;
	CardMail *received;
} CardMailArg;

/* The configuration BAR offset of a tile's TDI register. */
static inline uint32_t
card_tdi_reg(uint32_t physical, uint32_t reg)
{
	return CARD_TDI_BASE + physical * CARD_TDI_STRIDE + reg * 4;
}
/* The DCXCR register of exchange-buffer instance i (0..15). */
uint32_t card_xb_reg(uint32_t i);
/* A frame's payload bytes. */
enum {
	CARD_FRAME_PAYLOAD =
	    CARD_FRAME_SIZE - CARD_FRAME_HEADER - CARD_FRAME_TRAILER
};

/* The table as data, for `ipu device info --facts` and the docs. */
typedef struct {
	const char *name;   /* "REG_AUTOLD_CSR" */
	uint32_t value;     /* the ioctl code for an ioctl */
	char kind;          /* 'C' fact, 'I' ioctl, 'D' decision */
	const char *source; /* or, for a decision, its bounds */
} CardFact;
extern const CardFact card_facts[];
extern const int card_nfacts;
/* The register whose offset this is ("AUTOLD_CSR", "TDI 37 DATA"), in buf;
 * "" if the table names none. */
const char *card_reg_name(uint32_t off, char *buf, uint32_t len);
/* The ioctl's name ("MAILBOX"), or NULL. */
const char *card_ioctl_name(unsigned long code);

#endif
