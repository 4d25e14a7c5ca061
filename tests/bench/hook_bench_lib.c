/* hook_bench_lib.c - libhookb.so: the function the hook benchmark times. */
int hb_inc(int x)
{
	return x + 1;
}
