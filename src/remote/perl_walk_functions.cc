// The shell functions that run the perl programs (perl_walk.h): pwk, the
// walk (perl_walk.cc) with the details' sub (perl_details.cc) or the
// signal's (perl_kill.cc) where asked, and pdt, the details' own program;
// the programs themselves as shell variables (PLW, PLD, PDS, PKS).
#include "perl_walk.h"

namespace fleetreap {
namespace remote_script_internal {

std::string PerlWalkFunctions() {
  std::string s = "# shellcheck disable=SC2016  # perl's program: its own variables\nPLW='";
  s += PerlWalkProgram();
  s += "'\n# shellcheck disable=SC2016  # perl's program: its own variables\nPLD='";
  s += PerlDetailsProgram();
  s += "'\n# shellcheck disable=SC2016  # perl's program: its own variables\nPDS='";
  s += PerlDetailsSub();
  s += "'\n# shellcheck disable=SC2016  # perl's program: its own variables\nPKS='";
  s += PerlKillSub();
  s += R"SH('
PL=; command -v perl >/dev/null 2>&1 && PL=1
# pwk MODE [SX [KM [PIDS]]]: the walk by perl (PLW) where the host has it,
# of PIDS where given, else of every process. Sets FR,
# MR, HP, GP and FE as fds and mps do (mode m adds to HP and GP, as mps
# after the listing's fd pass), UI as fds does, and with KM the kernel log's
# lines as rdy reads them (KY, KR=1 where read); a perl that failed or died
# (no "." line) saw nothing: FE=1, blind (PY: the targets it had set out
# to signal before it died).
# shellcheck disable=SC2034  # FR, MR, GP, UI, FE, KY, KR and PY are the caller's
pwk() {
  case $1 in *f*) HP=; GP=; FR=; FE=;; esac
  MR=; KY=; QG=; QD=; QF=; QS=; PA=; PK=; PY=; PN=; DT=; xe=; q1=; q2=; q3=; q4=; g=$PLW; n=
  # With PQ (a scan's holder part) the GPU and compute-apps queries too, and
  # the GPUs' minors (MD, MI); with DN also the details (dtl: PDS) of the
  # charged PIDs and the holders, printed after the queries' records (DT;
  # NS's lines: PN).
  [ -z "$PQ" ] || { q1=$T; q2="--query-gpu=$GF --format=csv,nounits"; q3=$AQ; q4=$DR; exec 3>&1; }
  [ -z "$PQ" ] || [ -z "$DN" ] || { g=$PLW$PDS; n=$DN; }
  [ -z "$KS" ] || g=$g$PKS
  # Without NV, perl reads the majors (MJ, MN) itself; a perl that failed
  # leaves them to nvm.
  m=; [ -z "$NV" ] || m=$MJ
  x=$(perl -e "$g" -- "$DV" "$SD" "$m" "$CI" "$1" "$2" "$3" "$4" "$q1" "$q2" "$q3" "$$" "$q4" "$KS" "$KB" "$KT" "$n" "$CC" 2>/dev/null </dev/null) || xe=1
  [ -z "$PQ" ] || exec 3>&-
  [ -n "$xe" ] || case $x in
    .|*"$NL.") ;;
    *"$NL.$NL"*) KY=${x#*"$NL.$NL"}; x=${x%%"$NL.$NL"*};;
    *) xe=1;;
  esac
  if [ -n "$xe" ]; then
    # A perl that failed or died: blind, but the signals it set out to send
    # before it died may have gone out (PY: their targets).
    FE=1; set -f; IFS=$NL
    for l in $x; do case $l in 'P try '*) PY="$PY ${l#P try }";; esac; done
    IFS=" 	$NL"; set +f; nvm; return 0
  fi
  set -f; IFS=$NL
  for l in $x; do
    case $l in
      'fd '*|'fdp '*) FR="$FR$l$NL";;
      'mm '*|'mmp '*) MR="$MR$l$NL";;
      H|'H '*) IFS=' '; for p in ${l#H}; do add "$p"; done; IFS=$NL;;
      'G '*) GP="$GP ${l#G }";;
      'U '*) UI="$UI ${l#U }";;
      E) FE=1;;
      K) KR=1;;
      'Q '*) QG=${l#Q };;
      QD|'QD '*) QD=${l#QD};;
      'QF '*) QF=${l#QF };;
      QS) QS=1;;
      'MJ '*) MJ=${l#MJ }; NV=1;;
      'MI '*) MI="$MI${l#MI }$NL";;
      MD) MD=1;;
      MN|'MN '*) MN=${l#MN};;
      'SS '*) SS=${l#SS };;
      SA|'SA '*) SA=${l#SA}; SV=1;;
      'P try '*) ;;
      'P '*) PA="$PA${l#P }$NL"; PK=1;;
      'N '*) PN="$PN${l#N }$NL";;
      DT) DT=1;;
    esac
  done
  IFS=" 	$NL"; set +f
}
# pdt PIDS: dump's records and NS by perl (PLD).
# shellcheck disable=SC2086,SC2034  # NY is a list of paths, under set -f; NS is the caller's
pdt() {
  set -f; exec 3>&1
  NS=$(perl -e "$PLD$PDS" -- "$1" $NY 4>&1 >&3 2>/dev/null </dev/null)
  exec 3>&-; set +f
}
)SH";
  return s;
}

}  // namespace remote_script_internal
}  // namespace fleetreap
