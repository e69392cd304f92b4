# The Perl program of bench/accuracy: a hash of short strings, an array
# of arrays, a sort and a join, built in rounds and dropped; at the end
# everything is undefined, so the last RSS shows what the allocator keeps.
# Usage: perl workload.pl [ROUNDS]
use strict;
use warnings;
my $rounds = $ARGV[0] // 2;
my @kept;
for my $r (1 .. $rounds) {
	my %h;
	$h{"key-$r-$_"} = "value " x ($_ % 7 + 1) for 1 .. 40000;
	my @rows = map { [ $_, "row $_", $_ * 1.5 ] } 1 .. 20000;
	my @sorted = sort { $h{$a} cmp $h{$b} } keys %h;
	my $text = join(",", @sorted[0 .. 9999]);
	push @kept, @rows[map { $_ * 100 } 0 .. 199];
	undef %h;
	undef @rows;
	undef @sorted;
}
undef @kept;
