// The holder walk by perl (perl_walk.h): one perl run does what fds and mps
// do with find, stat, grep and sort, and prints exactly the records (or the
// lines the shell turns into records) the shell path prints; the shell
// functions that run it are perl_walk_functions.cc, the details' program
// perl_details.cc, the signal's sub perl_kill.cc.
#include "perl_walk.h"

namespace fleetreap {
namespace remote_script_internal {

namespace {

// PLW: the walk. Arguments: DV, SD, MJ, CI and the mode (f: every thread's
// fds, m: every mapping, s: the mappings of /dev/shm inodes CI on device SX,
// the sixth argument); the seventh, where not "", is the kernel log read as
// rdy reads it (dd, then grep's first 1000 boot and Xid lines); the eighth,
// where not "", the PIDs to walk (the signal step's targets), else every
// PID. Prints the fd records (fds' FR, in
// sort -u's order), the mapping records (mps' MR), then "H PIDS" (the holders in the order first
// seen), "G PIDS" (those that hold a GPU's own file), "U INODES" (the candidates' inodes held) and
// "E" where /proc could not be read, "K" where the kernel log was read, and "." (then the kernel
// log's lines): a perl that failed or died before it printed "." saw nothing, which the shell says
// as blind. Each sort below is sort -u's on the shell path (the first of equal keys in input order
// kept; C collation). Neither program says "use strict" or "no warnings":
// loading strict.pm and warnings.pm costs a host about 3 ms of CPU a run
// (warnings are off without -w anyway); perl_programs_test compiles both
// under -Mstrict. An empty MJ: it reads the NVIDIA majors from
// /proc/devices itself, as nvm does, and prints "MJ MAJORS" and "MN PAIRS".
// The twelfth argument, this shell's PID: its start time ("SS TICKS") and
// ancestors ("SA PIDS"), as the scan's session loop reads them. The
// thirteenth, the driver's GPU folder: each GPU's minor ("MI N BUS", then
// "MD"; nothing where a folder's name holds a newline), as the scan's loop
// reads them. The fourteenth to sixteenth, the signal step's SIG, SB and
// TG (signal.cc), where the program has the sub pks (perl_kill.cc, PKS):
// after the walk of the targets, the step's checks, "P skip T" for a target
// T not born before SB or holding no device file now (the step's "gone"),
// and pks's signal through pidfds for the rest, its lines prefixed "P "
// ("P try T" before each signal, which pwk reads only where the perl died:
// PY), in the same run (one perl fewer per wave), each written as soon as
// it is known, before the records. With TO
// (the ninth argument) it forks the two queries
// beside the walk, each nvidia-smi in a process group of its own under
// perl's own bound, as timeout -k 1 TO bounds it: past TO a TERM to the
// group (exit 124), a second on a KILL (137), never waited for after it (a
// query stuck in the driver); no timeout process per query. A query that
// ended while the walk ran is reaped before the bound is looked at: its own
// exit, however long the walk took (a million fds).
constexpr char kWalk[] = R"PL(
my ($dv, $sd, $mj, $ci, $mo, $sx, $km, $on, $to, $gq, $aq, $sp, $dr) = @ARGV;
my @n;
if ($mj eq "") {
  my $c; $mj = "195";
  if (open(my $h, "<", "/proc/devices")) {
    while (my $l = <$h>) {
      next unless $l =~ s/\n\z//; $l =~ s/^[ \t]+//; $l =~ s/[ \t]+$//;
      my ($k, $v) = split /[ \t]+/, $l, 2; $v = "" unless defined $v;
      if ($k eq "Character") { $c = 1; next } if ($k eq "Block") { $c = 0; next }
      next unless $c and $k =~ /^[0-9]+$/ and $v =~ /^nvidia[a-z0-9-]*$/;
      push @n, "$k $v"; $mj .= " $k" if $k ne "195";
    }
  }
}
my %mj = map { ($_, 1) } split / /, $mj; my %ci = map { ($_, 1) } split / /, $ci;
my (%h, @h, @g, @u, @r, @m);
sub add { push @h, $_[0] unless $h{$_[0]}++ }
sub dn { my $v = shift; ((($v >> 8) & 0xfff) | (($v >> 32) & ~0xfff), ($v & 0xff) | (($v >> 12) & ~0xff)) }
sub uq { my ($x, $k) = @_; my (%s, @o); my $i = 0;
  for (sort { $a->[0] cmp $b->[0] or $a->[1] cmp $b->[1] or $a->[2] cmp $b->[2] or $a->[3] <=> $b->[3] }
       map { [$k->($_), $i++, $_] } @$x) { push @o, $_->[4] unless $s{"$_->[0]/$_->[1]/$_->[2]"}++ }
  @o }
sub pf { $_[0] =~ m{^/proc/([^/]*)/} ? $1 : "" }
opendir(my $D, "/proc") or do { print "E\n.\n"; exit 0 };
my @p = sort grep { /^[0-9]/ } readdir $D; closedir $D;
if ($on ne "") { my %o = map { ($_, 1) } split / /, $on; @p = grep { $o{$_} } @p }
my (@q, $dl, $kd);
sub nw { if (open(my $u, "<", "/proc/uptime")) { my $l = <$u>; return $1 if defined $l and $l =~ /^([0-9]+(\.[0-9]+)?)/ } time }
if (defined $to and $to ne "") {
  $dl = nw() + $to;
  for my $z ($gq, $aq) {
    my ($r, $w); my $c = pipe($r, $w) ? fork : undef;
    if (!defined $c) { push @q, undef; next }
    if (!$c) {
      close $r; if (open(my $x, ">&=", 3)) { close $x }
      open(STDOUT, ">&", $w); open(STDERR, ">&", $w); close $w; open(STDIN, "<", "/dev/null");
      setpgrp(0, 0); exec("nvidia-smi", split(/ /, $z)); exit($! == 2 ? 127 : 126);
    }
    close $w; push @q, [$r, "", 0, $c, 0, undef];
  }
}
if ($mo =~ /f/) {
  my (@w, @x);
  for my $p (@p) {
    opendir(my $T, "/proc/$p/task") or next; my %k;
    for my $t (readdir $T) {
      next if $t eq "." or $t eq ".."; my $d = "/proc/$p/task/$t/fd";
      my @s = lstat $d or next; next if $s[7] and $k{$s[7]}++; push @w, $d;
    }
  }
  my $pre = "$dv/nvidia";
  for my $d (@w) {
    opendir(my $F, $d) or next;
    for my $f (readdir $F) {
      next if $f eq "." or $f eq ".."; my $e = "$d/$f"; my $l = readlink $e;
      push @x, "p $e $l" if defined $l and index($l, $pre) == 0 and $l !~ m{[^-a-zA-Z0-9/_.]};
      my @s = stat $e or next; my $y = $s[2] & 0170000;
      next unless $y == 0020000 or ($sd ne "" and $y == 0100000);
      push @x, sprintf("c %x %x %x %d %d %s", $s[2], dn($s[6]), $s[0], $s[1], $e);
    }
  }
  for my $l (uq(\@x, sub { my @f = split m{/}, $_[0], -1; ($f[0], $f[2], join("/", @f[7 .. $#f])) })) {
    my @w = split / /, $l; my ($p, $f) = ("", "");
    ($p, $f) = ($1, $2) if ($w[0] eq "c" ? $w[6] : $w[1]) =~ m{^/proc/([^/]*)/.*/([^/]*)$};
    next unless "$p$f" =~ /^[0-9]*$/;
    if ($w[0] eq "c" and @w == 7) {
      push @u, $w[5] if $sd ne "" and $w[4] eq $sd and $ci{$w[5]};
      next unless $w[1] =~ /^2...$/; my ($ma, $mi) = (hex $w[2], hex $w[3]); next unless $mj{$ma};
      push @g, $p if $ma == 195 and $mi < 254; push @r, "fd $p $f $ma $mi";
    } elsif ($w[0] eq "p" and @w == 3) {
      push @g, $p if $w[2] =~ m{^\Q$dv\E/nvidia[0-9]}; push @r, "fdp $p $f:$w[2]";
    } else { next }
    add($p);
  }
}
if ($mo =~ /[ms]/) {
  my (@x, @y);
  for my $p (@p) {
    open(my $M, "<", "/proc/$p/maps") or next;
    while (my $l = <$M>) {
      chomp $l;
      if ($mo =~ /s/) { my @w = split " ", $l; push @u, $w[4] if $w[3] eq $sx and $ci{$w[4]} }
      push @x, "/proc/$p/maps:$l" if $mo =~ /m/ and $l =~ m{ /([^ ]*/)?nvidia[^/ ]*( \(deleted\))?$};
    }
  }
  my ($lp, %k) = ("");
  for my $l (uq(\@x, sub { my @f = split m{/}, $_[0], -1; ($f[2], join("/", @f[4 .. $#f]), "") })) {
    my $p = pf($l); next unless $p =~ /^[0-9]+$/;
    my ($r) = $l =~ m{/maps:([^ ]*)}; (my $n = $l) =~ s/ \(deleted\)$//; $n =~ s{^.* /}{/}s;
    if ($p ne $lp) { $lp = $p; %k = () } next if $k{$n}++;
    if (index($n, "$dv/nvidia") == 0 and $n !~ m{[^-a-zA-Z0-9/_.]}) {
      push @g, $p if $n =~ m{^\Q$dv\E/nvidia[0-9]}; push @m, "mmp $p:$n"; add($p); next;
    }
    next unless $r =~ /^[0-9a-f-]+$/;
    push @y, "/proc/$p/map_files/$r"; push @y, "/proc/$p/root$n" unless $l =~ / \(deleted\)$/;
  }
  ($lp, %k) = ("");
  for my $s (@y) {
    my $p = pf($s); next unless $p =~ /^[0-9]+$/;
    my @s = stat $s or next; next unless ($s[2] & 0170000) == 0020000;
    my ($ma, $mi) = dn($s[6]); next unless $mj{$ma};
    if ($p ne $lp) { $lp = $p; %k = () } next if $k{"$ma:$mi"}++;
    push @g, $p if $ma == 195 and $mi < 254; push @m, "mm $p $ma $mi"; add($p);
  }
}
my $ky;
if ($km ne "" and sysopen(my $K, $km, 04000)) {
  my ($t, $b, $i, $c) = ("", "", 0, 0); $ky = "";
  while ($i++ < 262144) { my $n = sysread($K, $b, 8192); last unless $n; $t .= $b }
  for (split /\n/, $t) { next unless /^[0-9]*,0,/ or /NVRM: Xid/; $ky .= "$_\n"; last if ++$c >= 1000 }
}
my @o;
while (@q) {
  my ($i, $n, $l) = ("", 0, 0);
  for (@q) {
    next unless $_;
    if (!defined $_->[5]) { my $k = waitpid($_->[3], 1); if ($k == $_->[3]) { $_->[5] = $? } elsif ($k < 0) { $_->[5] = -1 } }
    if (!$_->[2]) { vec($i, fileno($_->[0]), 1) = 1; $n++ } elsif (!defined $_->[5]) { $l++ }
  }
  last unless $n or $l;
  my $w = (defined $kd ? $kd : $dl) - nw();
  if ($w <= 0) {
    last if defined $kd; $kd = nw() + 1;
    for (@q) { next if !$_ or defined $_->[5]; kill("TERM", -$_->[3]); $_->[4] = 124 }
    next;
  }
  $w = 0.01 if $l and $w > 0.01;
  my $c = select(my $v = $i, undef, undef, $w);
  if ($c < 0) { next if $! == 4; last }
  for (@q) {
    next unless $_ and !$_->[2] and $n and vec($v, fileno($_->[0]), 1);
    my $k = sysread($_->[0], my $b, 65536);
    if (!$k) { $_->[2] = 1; close $_->[0]; next }
    $_->[1] .= $b;
    if (length($_->[1]) >= 8388608) { substr($_->[1], 8388608) = ""; $_->[2] = 1; close $_->[0] }
  }
}
for (@q) {
  if (!$_) { push @o, undef; next }
  if (!defined $_->[5]) { kill("KILL", -$_->[3]); $_->[4] = 137; close $_->[0] unless $_->[2] }
  my $s = defined $_->[5] ? $_->[5] : 0; (my $t = $_->[1]) =~ tr/\0//d; $t =~ s/\n+\z//;
  push @o, [$_->[4] ? $_->[4] : $s & 127 ? 128 + ($s & 127) : $s >> 8, $t];
}
my ($ss, $sa);
if (defined $sp and $sp =~ /^[0-9]+$/) {
  if (open(my $h, "<", "/proc/$sp/stat")) {
    local $/; my $t = <$h>; $t = "" unless defined $t; $t =~ tr/\n//d; $t =~ s/^.*\)//s;
    my @a = split " ", $t; $ss = $a[19] if @a >= 20 and $a[19] =~ /^[0-9]+$/;
  }
  my ($p, $i) = ($sp, 0); $sa = "";
  while ($p > 1 and $i < 64) {
    my $n = "";
    if (open(my $h, "<", "/proc/$p/status")) {
      while (my $l = <$h>) { if ($l =~ /^[ \t]*PPid:(?:[ \t]+(.*?))?[ \t]*\n?$/) { $n = defined $1 ? $1 : ""; last } }
    }
    last unless $n =~ /^[0-9]+$/;
    $p = $n; $i++; $sa .= " $p" if $p > 1;
  }
  push @r, "SA$sa"; push @r, "SS $ss" if defined $ss;
}
my ($qg, $qa, @qd) = @o;
if ($qg and $qa and $qg->[1] !~ /not a valid field/ and open(my $R, ">&=", 3)) {
  my $t = defined $sa ? "session $sp$sa\0" . (defined $ss ? "clock $ss\0" : "") : "";
  $t .= "gpu $qg->[0]:$qg->[1]\0";
  if ($qg->[0] == 124 or $qg->[0] == 137) { $t .= "apps -\0" }
  else {
    $t .= "apps $qa->[0]:$qa->[1]\0";
    for (split /\n/, $qa->[1]) { push @qd, $1 if /^([0-9]+)(,|$)/ }
  }
  # The details of the charged PIDs and the holders (D and HP after cap in
  # the shell) where asked (DN: NY in the shell; CC the cap), after the
  # records of the queries, before the table: no other perl for them.
  my ($dn, $cc) = @ARGV[16, 17]; my $dd;
  if (defined $dn and $dn ne "" and $mo =~ /f/ and $mo =~ /m/ and defined &dtl) {
    my %k = map { ($_, 1) } @g, @qd; my @hh = @h;
    @hh = grep { $k{$_} } @h if defined $cc and $cc =~ /^[0-9]+$/ and (grep { !$k{$_} } @h) > $cc;
    my %s; my @d = grep { !$s{$_}++ } @qd, @hh;
    dtl(sub { $t .= join("", @_) }, sub { push @r, map { "N $_" } split /\n/, join("", @_) }, \@d, [split " ", $dn]);
    $dd = 1;
  }
  push @r, "Q $qg->[0]", join(" ", "QD", @qd), defined $sa ? "QS" : (), $dd ? "DT" : () if print($R $t) and close $R;
} elsif ($qg and $qg->[1] =~ /not a valid field/) {
  my ($gf) = $gq =~ /^--query-gpu=(\S*)/; my ($k, @f) = (0);
  for my $y (split /,/, $gf) { if (index($qg->[1], "\"$y\"") >= 0) { $k = 1 } else { push @f, $y } }
  push @r, "QF $k " . join(",", @f);
}
push @r, "MJ $mj", join(" ", "MN", @n) if $ARGV[2] eq "";
if (defined $dr and $dr ne "" and opendir(my $G, $dr)) {
  my ($nl, @mi);
  for my $g (sort grep { !/^\./ } readdir $G) {
    $nl = 1 if $g =~ /\n/; my $f = "$dr/$g/information";
    next unless -r $f and open(my $h, "<", $f);
    while (my $l = <$h>) {
      last unless $l =~ s/\n\z//;
      my ($k, $v) = split /:/, $l, 2; next unless $k eq "Device Minor";
      $v = "" unless defined $v; $v =~ s/^[ \t]+//; my ($n) = split /[ \t]+/, $v;
      push @mi, "MI $n $g" if defined $n and $n =~ /^[0-9]+$/; last;
    }
  }
  push @r, @mi, "MD" unless $nl;
}
my ($ks, $kb, $kt) = @ARGV[13 .. 15];
if (defined $ks and $ks ne "" and defined $kt and defined &pks) {
  $kb = "" unless defined $kb; $| = 1; my @k;
  for my $t (split " ", $kt) {
    my ($p, $w) = split /:/, $t; $p = "" unless defined $p; $w = "" unless defined $w;
    if ($p =~ /^[0-9]+$/ and $w =~ /^[0-9]+$/ and $h{$p} and ($kb eq "" or $w < $kb)) { push @k, $t } else { print "P skip $t\n" }
  }
  pks($ks eq "KILL" ? 9 : 15, "P ", @k);
}
print map({ "$_\n" } @r, @m), join(" ", "H", @h), "\n", join(" ", "G", @g), "\n", join(" ", "U", @u), "\n";
print defined $ky ? "K\n.\n$ky" : ".\n";
)PL";

}  // namespace

const char* PerlWalkProgram() { return kWalk; }

}  // namespace remote_script_internal
}  // namespace fleetreap
