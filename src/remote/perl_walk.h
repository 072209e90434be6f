// The holder walk and the holders' details by perl, where the host has it
// (perl_walk.cc, perl_details.cc, perl_kill.cc; perl_walk_functions.cc): the
// shell functions pwk (the fd pass and the mappings' pass, fds and mps in one
// run) and pdt (dump's details), and PL, set where
// perl is found. Each prints exactly the records of the shell path, which
// stays the fallback on a host without perl; a perl that fails or dies
// reads as a walk that could not run (FE=1: "blind"). Internal to the step
// files of src/remote/; pure functions.
#pragma once

#include <string>

namespace fleetreap {
namespace remote_script_internal {

/// PLW and PLD (the perl programs), PDS and PKS (their subs dtl and pks),
/// PL, and the functions pwk and pdt; needs
/// the prelude (add, NL, DV) before it.
std::string PerlWalkFunctions();

/// PLW's program text (perl_walk.cc): the walk, and what rides on it.
const char* PerlWalkProgram();

/// PLD's program text (perl_details.cc), less the sub dtl it runs: the
/// holders' details, and the units that own them.
const char* PerlDetailsProgram();

/// The sub dtl that PLD runs (perl_details.cc), for the walk's perl to
/// describe the holders it found in the same run.
const char* PerlDetailsSub();

/// The sub pks (perl_kill.cc): the signal through pidfds, run by the signal
/// step's walk after its checks, and by the kill's own perl.
const char* PerlKillSub();

}  // namespace remote_script_internal
}  // namespace fleetreap
