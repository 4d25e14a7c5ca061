# Hooked C++ functions are named as C++ code spells them: the tables and
# the trace show "nn::scale(int)", not "_ZN2nn5scaleEi"; each overload
# keeps a row of its own; the Name column widens to the longest name; a
# pattern written against demangled names ('libhookcxx.so:nn::scale*')
# selects one overload family. cxxmain 10 calls nn::scale(int) 10 times,
# nn::scale(double) 20, nn::inner::Acc::add(long) 30, nn::other(int) 40,
# nn::length(std::string const&) 50.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
g++ -O2 -g -shared -fPIC -o "$WORK/libhookcxx.so" "$HOOKLIBS/cxxlib.cpp"
g++ -O2 -g -o "$WORK/cxxmain" "$HOOKLIBS/cxxmain.cpp" -L"$WORK" -lhookcxx \
	-Wl,-rpath,"$WORK"
sec='C API (libhookcxx.so)'

HOOK_SPEC='libhookcxx.so:*' hook_same all "$WORK/cxxmain" 10
s=$WORK/all.summary.json
expect_eq "nn::scale(int)" 10 "$(span "$s" "$sec/nn::scale(int)")"
expect_eq "nn::scale(double)" 20 "$(span "$s" "$sec/nn::scale(double)")"
expect_eq "nn::inner::Acc::add(long)" 30 \
	"$(span "$s" "$sec/nn::inner::Acc::add(long)")"
expect_eq "nn::other(int)" 40 "$(span "$s" "$sec/nn::other(int)")"
expect_eq "nn::length(...)" 50 "$(span "$s" \
	"$sec/nn::length(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)")"
expect_eq "spans of $sec" 150 "$(jget "$s" \
	"sum(v for k, v in d['spans'].items() if k.startswith('$sec/'))")"
expect_eq "mangled names left" 0 "$(grep -c '_ZN2nn' "$WORK/all.json" || true)"
st=$WORK/all.stats.txt
expect_eq "table: nn::inner::Acc::add(long)" 30 \
	"$(row_count "$st" "$sec" 'nn::inner::Acc::add(long)')"
expect_eq "table: nn::scale(double)" 20 \
	"$(row_count "$st" "$sec" 'nn::scale(double)')"

# The Name column fits the longest name (nn::length's, 80 characters):
# in every row the count ends where the header's "Total Count" ends.
awk -v sec="$sec" '$0 == sec { s = 1; getline; getline
		e = index($0, "Total Count") + 10; getline; next }
	s && /^$/ { exit }
	s && !(substr($0, e, 1) ~ /[0-9]/ && substr($0, e + 1, 1) == " ") {
		print "misaligned: " $0; bad = 1 }
	END { exit bad }' "$st" || fail "the Name column does not fit"
echo "ok: columns aligned"

# A demangled pattern: only the nn::scale overloads.
HOOK_SPEC='libhookcxx.so:nn::scale*' hook_same sc "$WORK/cxxmain" 10
s=$WORK/sc.summary.json
expect_eq "nn::scale(int)" 10 "$(span "$s" "$sec/nn::scale(int)")"
expect_eq "nn::scale(double)" 20 "$(span "$s" "$sec/nn::scale(double)")"
expect_eq "spans of $sec" 30 "$(jget "$s" \
	"sum(v for k, v in d['spans'].items() if k.startswith('$sec/'))")"
