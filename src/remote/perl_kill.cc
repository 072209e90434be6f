// The signal through pidfds by perl (perl_walk.h): the sub pks, which the
// signal step's walk runs after its checks, and the kill's own perl where
// that walk failed; one text for both.
#include "perl_walk.h"

namespace fleetreap {
namespace remote_script_internal {

namespace {

// pks N PREFIX T...: for each target T (PID:START:f|m), a pidfd, the start
// time and state read again through /proc, and signal N through the pidfd:
// a PID freed and reused after the check is never the one signalled. Prints
// PREFIX and "sent|gone|failed T", or "kill T" where no pidfd opens (ENOSYS,
// a seccomp filter: kill(1) then), each as soon as it is known ($|: a write
// a line), and "try T" right before T's signal: a perl killed after a
// signal (or while sending it) has still said it set out to. An exited
// zombie (no thread left) is gone. pidfd_open is 434 and pidfd_send_signal
// 424 on every architecture but alpha.
constexpr char kKillSub[] = R"PL(
sub pks { my ($n, $o, @t) = @_; $| = 1;
  for my $t (@t) {
    my ($p, $w) = split /:/, $t; $p += 0;
    my $f = syscall(434, $p, 0);
    if ($f < 0) { print $o, $! + 0 == 3 ? "gone" : "kill", " $t\n"; next }
    my $s = ""; if (open(my $S, "<", "/proc/$p/stat")) { local $/; $s = <$S>; $s = "" unless defined $s }
    $s =~ s/^.*\)//s; my @a = split " ", $s;
    if (@a and $a[0] =~ /^[ZX]$/) { my @k; if (opendir(my $T, "/proc/$p/task")) { @k = grep { /^[0-9]/ } readdir $T } @a = () if @k < 2 }
    if (@a < 20 or $a[19] ne $w) { print "${o}gone $t\n" }
    elsif (print("${o}try $t\n") and syscall(424, $f, $n, 0, 0) == 0) { print "${o}sent $t\n" }
    else { print $o, $! + 0 == 3 ? "gone" : "failed", " $t\n" }
    if (open(my $F, "<&=", $f)) { close $F }
  }
}
)PL";

}  // namespace

const char* PerlKillSub() { return kKillSub; }

}  // namespace remote_script_internal
}  // namespace fleetreap
