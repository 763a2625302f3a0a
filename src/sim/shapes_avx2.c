/*
 * shapes_avx2.c - the shapes' loops (shapes.h) built for AVX2, FMA and F16C
 * (CMakeLists.txt gives this file -mavx2 -mfma -mf16c on x86-64), so that
 * the AMP's arithmetic (amp.h) inlines into them and their state stays in
 * registers across it. Called only where sim_use_avx2() (tile.c's
 * run_fused); the portable build of the same loops is tile.c's run_shape.
 */
#include "shapes.h"

#if defined(__x86_64__) && defined(__GNUC__)
#if !SIM_AMP_INLINE
#error "shapes_avx2.c must be built with -mavx2 -mfma -mf16c"
#endif

int
sim_run_shape_avx2(Tile *t, FusedRun *r, int shape)
{
	return shapes_run(t, r, shape, 1);
}
#endif
