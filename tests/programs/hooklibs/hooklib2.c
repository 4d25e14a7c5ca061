/*
 * hooklib2.c - libhookt2.so, loaded with dlopen by hook_main after start.
 * It calls into libhookt.so through its own GOT, so those calls are timed
 * only if the new object was patched.
 */
int ht_add(int a, int b);

int ht2_mul(int a, int b)
{
	return ht_add(a, 0) * b;
}
