/*
 * card.c - card.def as data: the fact table, and names of registers and
 * ioctls for the logs of the card's traffic (hw.c).
 */
#include "card.h"

#include <stdio.h>
#include <string.h>

const CardFact card_facts[] = {
#define C(name, value, src) {#name, (uint32_t)(value), 'C', src},
#define D(name, value, why) {#name, (uint32_t)(value), 'D', why},
#define I(name, nr, dir, size, src)                                            \
	{#name, (uint32_t)CARD_IOC(dir, nr, size), 'I', src},
#include "card.def"
#undef C
#undef D
#undef I
};
const int card_nfacts = sizeof card_facts / sizeof card_facts[0];

uint32_t
card_xb_reg(uint32_t i)
{
	/* Instances 8..15 continue from the secondary base. */
	return i < CARD_XB_INSTANCES / 2
	           ? CARD_REG_XB_PRIMARY + i * CARD_XB_STRIDE
	           : CARD_REG_XB_SECONDARY +
	                 (i - CARD_XB_INSTANCES / 2) * CARD_XB_STRIDE;
}

static const char *const tdi_names[16] = {
    [CARD_TDI_CTXT_STATUS] = "CTXT_STATUS",
    [CARD_TDI_RUN_BREAK] = "RUN_BREAK",
    [CARD_TDI_INSN] = "INSN",
    [CARD_TDI_INSN_OWNER] = "INSN_OWNER",
    [CARD_TDI_EXCPT_STATE] = "EXCPT_STATE",
    [CARD_TDI_EXCPT_CLEAR] = "EXCPT_CLEAR",
    [CARD_TDI_DATA] = "DATA",
    [CARD_TDI_STATUS] = "STATUS",
    [CARD_TDI_STATUS_CLEAR] = "STATUS_CLEAR",
    [CARD_TDI_DCOUNT] = "DCOUNT",
    [CARD_TDI_XCTL] = "XCTL",
};

const char *
card_reg_name(uint32_t off, char *buf, uint32_t len)
{
	buf[0] = 0;
	if (off >= CARD_TDI_BASE && off < CARD_BAR_SIZE) {
		uint32_t rel = off - CARD_TDI_BASE,
		         reg = rel % CARD_TDI_STRIDE / 4;
		if (reg < 16 && tdi_names[reg])
			snprintf(buf, len, "TDI %u %s", rel / CARD_TDI_STRIDE,
			         tdi_names[reg]);
		return buf;
	}
	for (uint32_t i = 0; i < CARD_XB_INSTANCES; i++)
		if (off == card_xb_reg(i)) {
			snprintf(buf, len, "XB%u_DCXCR", i);
			return buf;
		}
	for (int i = 0; i < card_nfacts; i++)
		if (card_facts[i].kind == 'C' &&
		    !strncmp(card_facts[i].name, "REG_", 4) &&
		    card_facts[i].value == off) {
			snprintf(buf, len, "%s", card_facts[i].name + 4);
			break;
		}
	return buf;
}

const char *
card_ioctl_name(unsigned long code)
{
	for (int i = 0; i < card_nfacts; i++)
		if (card_facts[i].kind == 'I' && card_facts[i].value == code)
			return card_facts[i].name;
	return NULL;
}
