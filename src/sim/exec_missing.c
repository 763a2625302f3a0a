/* exec_missing.c - TEMPORARY during bring-up: weak fallbacks that fault
 * for instructions whose semantics are not written yet. */
#include "sim.h"

__attribute__((weak)) void
exec_abs(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "abs is not emulated yet");
}
__attribute__((weak)) void
exec_add(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "add is not emulated yet");
}
__attribute__((weak)) void
exec_and(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "and is not emulated yet");
}
__attribute__((weak)) void
exec_and64(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "and64 is not emulated yet");
}
__attribute__((weak)) void
exec_andc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "andc is not emulated yet");
}
__attribute__((weak)) void
exec_andc64(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "andc64 is not emulated yet");
}
__attribute__((weak)) void
exec_atom(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "atom is not emulated yet");
}
__attribute__((weak)) void
exec_bitrev8(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "bitrev8 is not emulated yet");
}
__attribute__((weak)) void
exec_br(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "br is not emulated yet");
}
__attribute__((weak)) void
exec_bri(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "bri is not emulated yet");
}
__attribute__((weak)) void
exec_brneg(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "brneg is not emulated yet");
}
__attribute__((weak)) void
exec_brnz(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "brnz is not emulated yet");
}
__attribute__((weak)) void
exec_brnzdec(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "brnzdec is not emulated yet");
}
__attribute__((weak)) void
exec_brpos(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "brpos is not emulated yet");
}
__attribute__((weak)) void
exec_brz(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "brz is not emulated yet");
}
__attribute__((weak)) void
exec_call(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "call is not emulated yet");
}
__attribute__((weak)) void
exec_clz(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "clz is not emulated yet");
}
__attribute__((weak)) void
exec_cmpeq(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "cmpeq is not emulated yet");
}
__attribute__((weak)) void
exec_cmpne(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "cmpne is not emulated yet");
}
__attribute__((weak)) void
exec_cmpslt(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "cmpslt is not emulated yet");
}
__attribute__((weak)) void
exec_cmpult(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "cmpult is not emulated yet");
}
__attribute__((weak)) void
exec_cms(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "cms is not emulated yet");
}
__attribute__((weak)) void
exec_delay(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "delay is not emulated yet");
}
__attribute__((weak)) void
exec_exitneg(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "exitneg is not emulated yet");
}
__attribute__((weak)) void
exec_exitnz(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "exitnz is not emulated yet");
}
__attribute__((weak)) void
exec_exitpos(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "exitpos is not emulated yet");
}
__attribute__((weak)) void
exec_exitz(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "exitz is not emulated yet");
}
__attribute__((weak)) void
exec_f16tof32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16tof32 is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2absadd(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2absadd is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2absmax(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2absmax is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2add(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2add is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2clamp(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2clamp is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2class(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2class is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2cmac(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2cmac is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2cmpeq(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2cmpeq is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2cmpge(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2cmpge is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2cmpgt(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2cmpgt is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2cmple(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2cmple is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2cmplt(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2cmplt is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2cmpne(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2cmpne is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2exp(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2exp is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2exp2(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2exp2 is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2gina(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2gina is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2grand(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2grand is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2ln(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2ln is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2log2(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2log2 is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2max(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2max is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2maxc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2maxc is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2min(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2min is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2mul(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2mul is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2sigm(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2sigm is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2sub(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2sub is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2sufromui(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f16v2sufromui is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2sum(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2sum is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2tanh(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2tanh is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2tof32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2tof32 is not emulated yet");
}
__attribute__((weak)) void
exec_f16v2tof8(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v2tof8 is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4absacc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4absacc is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4absadd(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4absadd is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4absmax(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4absmax is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4acc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4acc is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4add(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4add is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4clamp(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4clamp is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4class(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4class is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4cmac(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4cmac is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4cmpeq(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4cmpeq is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4cmpge(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4cmpge is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4cmpgt(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4cmpgt is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4cmple(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4cmple is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4cmplt(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4cmplt is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4cmpne(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4cmpne is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4gacc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4gacc is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4hihoamp(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f16v4hihoamp is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4hihoslic(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f16v4hihoslic is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4hihov4amp(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f16v4hihov4amp is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4hihov4slic(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f16v4hihov4slic is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4istacc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4istacc is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4max(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4max is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4maxc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4maxc is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4min(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4min is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4mix(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4mix is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4mul(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4mul is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4rmask(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4rmask is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4sihoamp(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f16v4sihoamp is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4sihoslic(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f16v4sihoslic is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4sisoamp(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f16v4sisoamp is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4sisoslic(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f16v4sisoslic is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4stacc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4stacc is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4sub(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4sub is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4sufromui(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f16v4sufromui is not emulated yet");
}
__attribute__((weak)) void
exec_f16v4sum(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v4sum is not emulated yet");
}
__attribute__((weak)) void
exec_f16v8absacc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v8absacc is not emulated yet");
}
__attribute__((weak)) void
exec_f16v8acc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v8acc is not emulated yet");
}
__attribute__((weak)) void
exec_f16v8sqacc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v8sqacc is not emulated yet");
}
__attribute__((weak)) void
exec_f16v8tof8(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f16v8tof8 is not emulated yet");
}
__attribute__((weak)) void
exec_f32absadd(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32absadd is not emulated yet");
}
__attribute__((weak)) void
exec_f32absmax(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32absmax is not emulated yet");
}
__attribute__((weak)) void
exec_f32add(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32add is not emulated yet");
}
__attribute__((weak)) void
exec_f32clamp(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32clamp is not emulated yet");
}
__attribute__((weak)) void
exec_f32class(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32class is not emulated yet");
}
__attribute__((weak)) void
exec_f32cmpeq(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32cmpeq is not emulated yet");
}
__attribute__((weak)) void
exec_f32cmpge(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32cmpge is not emulated yet");
}
__attribute__((weak)) void
exec_f32cmpgt(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32cmpgt is not emulated yet");
}
__attribute__((weak)) void
exec_f32cmple(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32cmple is not emulated yet");
}
__attribute__((weak)) void
exec_f32cmplt(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32cmplt is not emulated yet");
}
__attribute__((weak)) void
exec_f32cmpne(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32cmpne is not emulated yet");
}
__attribute__((weak)) void
exec_f32div(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32div is not emulated yet");
}
__attribute__((weak)) void
exec_f32exp(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32exp is not emulated yet");
}
__attribute__((weak)) void
exec_f32exp2(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32exp2 is not emulated yet");
}
__attribute__((weak)) void
exec_f32fromi32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32fromi32 is not emulated yet");
}
__attribute__((weak)) void
exec_f32fromui32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32fromui32 is not emulated yet");
}
__attribute__((weak)) void
exec_f32int(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32int is not emulated yet");
}
__attribute__((weak)) void
exec_f32ln(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32ln is not emulated yet");
}
__attribute__((weak)) void
exec_f32log2(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32log2 is not emulated yet");
}
__attribute__((weak)) void
exec_f32mac(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32mac is not emulated yet");
}
__attribute__((weak)) void
exec_f32max(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32max is not emulated yet");
}
__attribute__((weak)) void
exec_f32min(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32min is not emulated yet");
}
__attribute__((weak)) void
exec_f32mul(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32mul is not emulated yet");
}
__attribute__((weak)) void
exec_f32oorx(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32oorx is not emulated yet");
}
__attribute__((weak)) void
exec_f32oox(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32oox is not emulated yet");
}
__attribute__((weak)) void
exec_f32sigm(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32sigm is not emulated yet");
}
__attribute__((weak)) void
exec_f32sisoamp(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32sisoamp is not emulated yet");
}
__attribute__((weak)) void
exec_f32sisoslic(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32sisoslic is not emulated yet");
}
__attribute__((weak)) void
exec_f32sisov2amp(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f32sisov2amp is not emulated yet");
}
__attribute__((weak)) void
exec_f32sisov2slic(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f32sisov2slic is not emulated yet");
}
__attribute__((weak)) void
exec_f32sqrt(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32sqrt is not emulated yet");
}
__attribute__((weak)) void
exec_f32sub(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32sub is not emulated yet");
}
__attribute__((weak)) void
exec_f32sufromui(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32sufromui is not emulated yet");
}
__attribute__((weak)) void
exec_f32tanh(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32tanh is not emulated yet");
}
__attribute__((weak)) void
exec_f32tof16(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32tof16 is not emulated yet");
}
__attribute__((weak)) void
exec_f32toi32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32toi32 is not emulated yet");
}
__attribute__((weak)) void
exec_f32toui32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32toui32 is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2absadd(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2absadd is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2absmax(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2absmax is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2add(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2add is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2aop(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2aop is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2axpy(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2axpy is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2clamp(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2clamp is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2class(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2class is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2cmpeq(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2cmpeq is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2cmpge(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2cmpge is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2cmpgt(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2cmpgt is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2cmple(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2cmple is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2cmplt(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2cmplt is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2cmpne(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2cmpne is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2gina(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2gina is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2grand(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2grand is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2mac(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2mac is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2max(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2max is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2min(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2min is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2mul(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2mul is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2rmask(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2rmask is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2sub(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2sub is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2sufromui(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f32v2sufromui is not emulated yet");
}
__attribute__((weak)) void
exec_f32v2tof16(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v2tof16 is not emulated yet");
}
__attribute__((weak)) void
exec_f32v4absacc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v4absacc is not emulated yet");
}
__attribute__((weak)) void
exec_f32v4acc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v4acc is not emulated yet");
}
__attribute__((weak)) void
exec_f32v4sqacc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v4sqacc is not emulated yet");
}
__attribute__((weak)) void
exec_f32v4tof16(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f32v4tof16 is not emulated yet");
}
__attribute__((weak)) void
exec_f8v2tof16(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f8v2tof16 is not emulated yet");
}
__attribute__((weak)) void
exec_f8v4class(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f8v4class is not emulated yet");
}
__attribute__((weak)) void
exec_f8v4tof16(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "f8v4tof16 is not emulated yet");
}
__attribute__((weak)) void
exec_f8v8hihov4amp(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f8v8hihov4amp is not emulated yet");
}
__attribute__((weak)) void
exec_f8v8hihov4slic(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f8v8hihov4slic is not emulated yet");
}
__attribute__((weak)) void
exec_get(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "get is not emulated yet");
}
__attribute__((weak)) void
exec_ld128(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ld128 is not emulated yet");
}
__attribute__((weak)) void
exec_ld128putcs(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ld128putcs is not emulated yet");
}
__attribute__((weak)) void
exec_ld128step(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ld128step is not emulated yet");
}
__attribute__((weak)) void
exec_ld2x64pace(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ld2x64pace is not emulated yet");
}
__attribute__((weak)) void
exec_ld2xst64pace(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "ld2xst64pace is not emulated yet");
}
__attribute__((weak)) void
exec_ld32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ld32 is not emulated yet");
}
__attribute__((weak)) void
exec_ld32step(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ld32step is not emulated yet");
}
__attribute__((weak)) void
exec_ld64(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ld64 is not emulated yet");
}
__attribute__((weak)) void
exec_ld64a32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ld64a32 is not emulated yet");
}
__attribute__((weak)) void
exec_ld64a32pace(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ld64a32pace is not emulated yet");
}
__attribute__((weak)) void
exec_ld64b16pace(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ld64b16pace is not emulated yet");
}
__attribute__((weak)) void
exec_ld64putcs(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ld64putcs is not emulated yet");
}
__attribute__((weak)) void
exec_ld64step(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ld64step is not emulated yet");
}
__attribute__((weak)) void
exec_ldb16(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldb16 is not emulated yet");
}
__attribute__((weak)) void
exec_ldb16b16(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldb16b16 is not emulated yet");
}
__attribute__((weak)) void
exec_ldb16step(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldb16step is not emulated yet");
}
__attribute__((weak)) void
exec_ldb8(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldb8 is not emulated yet");
}
__attribute__((weak)) void
exec_ldb8step(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldb8step is not emulated yet");
}
__attribute__((weak)) void
exec_ldd16a32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldd16a32 is not emulated yet");
}
__attribute__((weak)) void
exec_ldd16a64(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldd16a64 is not emulated yet");
}
__attribute__((weak)) void
exec_ldd16b16(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldd16b16 is not emulated yet");
}
__attribute__((weak)) void
exec_ldd16v2a32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldd16v2a32 is not emulated yet");
}
__attribute__((weak)) void
exec_lds16(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "lds16 is not emulated yet");
}
__attribute__((weak)) void
exec_lds16step(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "lds16step is not emulated yet");
}
__attribute__((weak)) void
exec_lds8(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "lds8 is not emulated yet");
}
__attribute__((weak)) void
exec_lds8step(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "lds8step is not emulated yet");
}
__attribute__((weak)) void
exec_ldst64pace(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldst64pace is not emulated yet");
}
__attribute__((weak)) void
exec_ldz16(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldz16 is not emulated yet");
}
__attribute__((weak)) void
exec_ldz16step(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldz16step is not emulated yet");
}
__attribute__((weak)) void
exec_ldz8(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldz8 is not emulated yet");
}
__attribute__((weak)) void
exec_ldz8step(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "ldz8step is not emulated yet");
}
__attribute__((weak)) void
exec_max(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "max is not emulated yet");
}
__attribute__((weak)) void
exec_min(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "min is not emulated yet");
}
__attribute__((weak)) void
exec_movz(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "movz is not emulated yet");
}
__attribute__((weak)) void
exec_mul(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "mul is not emulated yet");
}
__attribute__((weak)) void
exec_not(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "not is not emulated yet");
}
__attribute__((weak)) void
exec_not64(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "not64 is not emulated yet");
}
__attribute__((weak)) void
exec_or(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "or is not emulated yet");
}
__attribute__((weak)) void
exec_or64(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "or64 is not emulated yet");
}
__attribute__((weak)) void
exec_popc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "popc is not emulated yet");
}
__attribute__((weak)) void
exec_put(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "put is not emulated yet");
}
__attribute__((weak)) void
exec_roll16(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "roll16 is not emulated yet");
}
__attribute__((weak)) void
exec_roll32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "roll32 is not emulated yet");
}
__attribute__((weak)) void
exec_roll8l(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "roll8l is not emulated yet");
}
__attribute__((weak)) void
exec_roll8r(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "roll8r is not emulated yet");
}
__attribute__((weak)) void
exec_rpt(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "rpt is not emulated yet");
}
__attribute__((weak)) void
exec_run(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "run is not emulated yet");
}
__attribute__((weak)) void
exec_runall(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "runall is not emulated yet");
}
__attribute__((weak)) void
exec_sans(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "sans is not emulated yet");
}
__attribute__((weak)) void
exec_send(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "send is not emulated yet");
}
__attribute__((weak)) void
exec_setzi(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "setzi is not emulated yet");
}
__attribute__((weak)) void
exec_shl(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "shl is not emulated yet");
}
__attribute__((weak)) void
exec_shr(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "shr is not emulated yet");
}
__attribute__((weak)) void
exec_shrs(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "shrs is not emulated yet");
}
__attribute__((weak)) void
exec_shuf8x8hi(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "shuf8x8hi is not emulated yet");
}
__attribute__((weak)) void
exec_shuf8x8lo(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "shuf8x8lo is not emulated yet");
}
__attribute__((weak)) void
exec_sort4x16hi(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "sort4x16hi is not emulated yet");
}
__attribute__((weak)) void
exec_sort4x16lo(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "sort4x16lo is not emulated yet");
}
__attribute__((weak)) void
exec_sort4x32hi(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "sort4x32hi is not emulated yet");
}
__attribute__((weak)) void
exec_sort4x32lo(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "sort4x32lo is not emulated yet");
}
__attribute__((weak)) void
exec_sort8(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "sort8 is not emulated yet");
}
__attribute__((weak)) void
exec_sort8x8hi(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "sort8x8hi is not emulated yet");
}
__attribute__((weak)) void
exec_sort8x8lo(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "sort8x8lo is not emulated yet");
}
__attribute__((weak)) void
exec_st32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "st32 is not emulated yet");
}
__attribute__((weak)) void
exec_st32step(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "st32step is not emulated yet");
}
__attribute__((weak)) void
exec_st64(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "st64 is not emulated yet");
}
__attribute__((weak)) void
exec_st64pace(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "st64pace is not emulated yet");
}
__attribute__((weak)) void
exec_st64step(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "st64step is not emulated yet");
}
__attribute__((weak)) void
exec_stm32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "stm32 is not emulated yet");
}
__attribute__((weak)) void
exec_stm32step(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "stm32step is not emulated yet");
}
__attribute__((weak)) void
exec_sub(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "sub is not emulated yet");
}
__attribute__((weak)) void
exec_swap8(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "swap8 is not emulated yet");
}
__attribute__((weak)) void
exec_sync(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "sync is not emulated yet");
}
__attribute__((weak)) void
exec_tapack(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "tapack is not emulated yet");
}
__attribute__((weak)) void
exec_trap(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "trap is not emulated yet");
}
__attribute__((weak)) void
exec_uget(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "uget is not emulated yet");
}
__attribute__((weak)) void
exec_uput(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "uput is not emulated yet");
}
__attribute__((weak)) void
exec_urand32(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "urand32 is not emulated yet");
}
__attribute__((weak)) void
exec_urand64(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "urand64 is not emulated yet");
}
__attribute__((weak)) void
exec_xnor(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "xnor is not emulated yet");
}
__attribute__((weak)) void
exec_xor(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0, "xor is not emulated yet");
}
