/*
 * siglip_gen.h - synthetic SigLIP vision checkpoints: every tensor of a
 * config (siglip_weights.h) with the exact names, shapes and a chosen
 * dtype, filled with seeded pseudo-random values whose statistics follow
 * the Hugging Face initialisation (docs/models.md gives the table). The
 * same seed gives the same bytes on every machine: the generator uses its
 * own PRNG and its own logarithm, only IEEE-exact operations otherwise.
 * Each tensor has its own stream, keyed by its name, so a checkpoint with
 * fewer layers holds the same values for the layers it has.
 */
#ifndef IPU_SIGLIP_GEN_H
#define IPU_SIGLIP_GEN_H

#include "siglip_weights.h"

/* siglip_gen.c */
/* t's values before rounding to the file's dtype, into out[elements]. */
void siglip_gen_values(const SiglipConfig *c, const SiglipTensor *t,
                       uint64_t seed, double *out);
/* Write the checkpoint (dtype ST_F32, ST_F16 or ST_BF16) to path. */
int siglip_gen(const char *path, const SiglipConfig *c, StDtype dtype,
               uint64_t seed, int overwrite, Diag *d);

#endif
