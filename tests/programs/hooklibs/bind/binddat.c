/* libbinddat.so: a function and two data symbols whose names match the
 * same pattern. Linked with -z noseparate-code, so the data shares the
 * executable segment with the code. */
const char bd_name[] = "binddat-1.2.3";
const int bd_table[4] = {10, 20, 30, 40};
int bd_fn(int x);

int bd_fn(int x)
{
	return x + 1;
}
