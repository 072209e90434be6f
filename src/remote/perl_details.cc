// The holders' details by perl (perl_walk.h): the program PLD, which does
// what the shell's dump does with three grep and two find, and prints exactly
// the records the shell path prints.
#include "perl_walk.h"

namespace fleetreap {
namespace remote_script_internal {

namespace {

// PLD: the details (dump's). Arguments: the PIDs (one word), then NY's
// paths. Prints dump's records on stdout and NS's lines on fd 4, the first
// of them "U UNITS": the units that own the PIDs, read from the cgroup files
// it reads anyway, in the order and by the rules of the scan's shell loop
// (each line as read -r gives it, a v2 or name=systemd line, its path's
// words that are NAME.service of the unit name characters). First: a link's
// text on a later line can hold a newline, never the first line.
constexpr char kDetails[] = R"PL(
my @p = split " ", shift; my @ny = @ARGV; my $N; open($N, ">&=", 4) or undef $N;
sub rd { open(my $h, "<", $_[0]) or return undef; local $/; my $t = <$h>; defined $t ? $t : "" }
sub rs { my @r = split /\0/, $_[0], -1; pop @r if @r and $r[-1] eq ""; @r }
my (@un, %un);
sub cu { my @l = split /\n/, $_[0], -1; pop @l;
  for my $l (@l) { $l =~ s/^[ \t]+//; $l =~ s/[ \t]+$//;
    next unless $l =~ m{^0::/} or $l =~ m{:name=systemd:/}; (my $r = $l) =~ s{^.*?:/}{}s;
    for (split m{/}, $r) { push @un, $_ if /^[A-Za-z0-9:_.\@-]+\.service$/ and !$un{$_}++ } } }
if (@p) {
  for my $f ((map { ("/proc/$_/stat", "/proc/$_/status", "/proc/$_/cgroup") } @p), "/etc/passwd") {
    my $t = rd($f); next unless defined $t; print map { "$f:$_\0" } rs($t);
    cu($t) if $f =~ m{/cgroup$};
  }
}
print $N join(" ", "U", @un), "\n" if $N;
if (@p) {
  for my $f (map { "/proc/$_/cmdline" } @p) {
    my $t = rd($f); next unless defined $t; my @r = rs($t); splice(@r, 32) if @r > 32;
    print map { length($_) ? "$f:" . substr($_, 0, 256) . "\0" : () } @r;
  }
  for my $f (map { "/proc/$_/environ" } @p) {
    my $t = rd($f); next unless defined $t;
    print map { /^(LD_(?:PRELOAD|AUDIT)=)/ ? "$f:$1\0" : () } rs($t);
  }
}
for (@p) { my $e = "/proc/$_/exe"; next unless lstat $e; my $l = readlink $e; print "exe /proc/$_:", (defined $l ? $l : ""), "\0" }
for my $f (@ny) {
  my @s = lstat $f or next; next unless $N;
  if (-l _) { my $l = readlink $f; print $N "L ", (defined $l ? $l : ""), "\n" }
  elsif ($s[4] == 0 and !($s[2] & 022)) { print $N "O $f\n" }
}
for (@p) {
  my $e = "/proc/$_/exe"; my @s = stat $e;
  unless (@s) { next unless $! == 2; @s = lstat $e or next }
  printf "exs /proc/%s %d %o\0", $_, $s[4], $s[2] & 07777;
}
)PL";

}  // namespace

const char* PerlDetailsProgram() { return kDetails; }

}  // namespace remote_script_internal
}  // namespace fleetreap
