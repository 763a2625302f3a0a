/*
 * rt_sim.h - the emulator behind a "sim:" device, for the toolchain's own
 * observers (src/profile: profiles, breakpoints and watches, reports of
 * where the tiles stopped). They may mark, watch and read its tiles
 * between loading and running and after the run; they never run it
 * (ipu_run does) and change nothing the program computes.
 */
#ifndef IPU_RT_SIM_H
#define IPU_RT_SIM_H

#include <ipu/runtime.h>

#include "../sim/sim.h"

/* The device's chip model, or NULL for a device of another backend. */
ChipSim *rt_chipsim(ipu_device *dev);

#endif
