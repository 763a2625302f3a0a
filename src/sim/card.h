/*
 * card.h - a register-level model of the C600 card's host interface around
 * the emulated chip: the configuration BAR (plain registers, the autoloader,
 * the host sync marks, the tile debug interface) and the kernel driver's
 * ioctls, with the numbers of target/card.def. The runtime's device layer
 * (src/hw/) drives it exactly as it drives /dev/ipuN; docs/hardware.md says
 * which behaviours are facts and which are the model's DECISIONs.
 *
 * The chip runs when the host writes a mark to HSP_GS1 (a batch of frames
 * for our bootloader, kernels/boot.S, or the handoff), until it waits for
 * the host again; otherwise callers run it through cardsim_chip(). Host
 * pages for a program's own host exchange are not served yet.
 */
#ifndef IPU_SIM_CARD_H
#define IPU_SIM_CARD_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

typedef struct CardSim CardSim;

/* A card holding a fresh chip of this configuration. */
CardSim *cardsim_new(const ChipConfig *cfg);
void cardsim_free(CardSim *cs);
/* The emulated chip (replaced by a fresh one at each ICU reset). */
ChipSim *cardsim_chip(CardSim *cs);
/* How many ICU resets the card has seen. */
uint32_t cardsim_resets(const CardSim *cs);

/* Register access at a BAR offset (4-byte aligned, inside the BAR); and an
 * ioctl of the kernel driver. 0, or -1 with what went wrong in msg (the
 * errno the driver would give, where it is an ioctl, in *errnum). */
int cardsim_read32(CardSim *cs, uint32_t off, uint32_t *v, char *msg,
                   size_t len);
int cardsim_write32(CardSim *cs, uint32_t off, uint32_t v, char *msg,
                    size_t len);
int cardsim_ioctl(CardSim *cs, unsigned long req, void *arg, int *errnum,
                  char *msg, size_t len);

/* The last run of the chip the model made (a mark in HSP_GS1): RUN_HOST
 * when it waits for the host at a sync, RUN_DONE after the handoff, else
 * what stopped it, in **err. */
RunStatus cardsim_last_run(const CardSim *cs, const ChipError **err);
/* The most cycles the programs may run from the handoff (default: no
 * bound); the load's runs end at host syncs. */
void cardsim_set_max_cycles(CardSim *cs, uint64_t max_cycles);

/* The host buffer attached under this index, or NULL. */
void *cardsim_buffer(const CardSim *cs, uint32_t index, uint32_t *size);

#endif
