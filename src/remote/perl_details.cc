// The holders' details by perl (perl_walk.h): the program PLD, which does
// what the shell's dump does with three grep and two find, and prints exactly
// the records the shell path prints.
#include "perl_walk.h"

namespace fleetreap {
namespace remote_script_internal {

namespace {

// dtl OUT NS PIDS NY: the details (dump's) of PIDS (an array ref), with
// NY's paths. Hands dump's records to OUT and NS's lines to NS (where not
// undef), the first of them "U UNITS": the units that own the PIDs, read
// from the cgroup files it reads anyway, in the order and by the rules of
// the scan's shell loop (each line as read -r gives it, a v2 or name=systemd
// line, its path's words that are NAME.service of the unit name
// characters). A link's text that holds a newline is not handed on (the
// shell reads NS line by line: never a line of a link's making).
constexpr char kDetailsSub[] = R"PL(
sub dtl { my ($o, $N, $pp, $ny) = @_; my @p = @$pp;
my (@un, %un);
my $rd = sub { open(my $h, "<", $_[0]) or return undef; local $/; my $t = <$h>; defined $t ? $t : "" };
my $rs = sub { my @r = split /\0/, $_[0], -1; pop @r if @r and $r[-1] eq ""; @r };
my $cu = sub { my @l = split /\n/, $_[0], -1; pop @l;
  for my $l (@l) { $l =~ s/^[ \t]+//; $l =~ s/[ \t]+$//;
    next unless $l =~ m{^0::/} or $l =~ m{:name=systemd:/}; (my $r = $l) =~ s{^.*?:/}{}s;
    for (split m{/}, $r) { push @un, $_ if /^[A-Za-z0-9:_.\@-]+\.service$/ and !$un{$_}++ } } };
if (@p) {
  for my $f ((map { ("/proc/$_/stat", "/proc/$_/status", "/proc/$_/cgroup") } @p), "/etc/passwd") {
    my $t = $rd->($f); next unless defined $t; $o->(map { "$f:$_\0" } $rs->($t));
    $cu->($t) if $f =~ m{/cgroup$};
  }
}
$N->(join(" ", "U", @un) . "\n") if $N;
if (@p) {
  for my $f (map { "/proc/$_/cmdline" } @p) {
    my $t = $rd->($f); next unless defined $t; my @r = $rs->($t); splice(@r, 32) if @r > 32;
    $o->(map { length($_) ? "$f:" . substr($_, 0, 256) . "\0" : () } @r);
  }
  for my $f (map { "/proc/$_/environ" } @p) {
    my $t = $rd->($f); next unless defined $t;
    $o->(map { /^(LD_(?:PRELOAD|AUDIT)=)/ ? "$f:$1\0" : () } $rs->($t));
  }
}
for (@p) { my $e = "/proc/$_/exe"; next unless lstat $e; my $l = readlink $e; $o->("exe /proc/$_:", (defined $l ? $l : ""), "\0") }
for my $f (@$ny) {
  my @s = lstat $f or next; next unless $N;
  if (-l _) { my $l = readlink $f; $l = "" unless defined $l; $N->("L $l\n") unless $l =~ /\n/ }
  elsif ($s[4] == 0 and !($s[2] & 022)) { $N->("O $f\n") }
}
for (@p) {
  my $e = "/proc/$_/exe"; my @s = stat $e;
  unless (@s) { next unless $! == 2; @s = lstat $e or next }
  $o->(sprintf("exs /proc/%s %d %o\0", $_, $s[4], $s[2] & 07777));
}
}
)PL";

// PLD: the details as a program of its own. Arguments: the PIDs (one
// word), then NY's paths.
constexpr char kDetailsMain[] = R"PL(
my @p = split " ", shift; my $N; open($N, ">&=", 4) or undef $N;
dtl(sub { print @_ }, $N ? sub { print $N @_ } : undef, \@p, \@ARGV);
)PL";

}  // namespace

const char* PerlDetailsProgram() { return kDetailsMain; }

const char* PerlDetailsSub() { return kDetailsSub; }

}  // namespace remote_script_internal
}  // namespace fleetreap
