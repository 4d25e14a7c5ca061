/* hooklib4.c - libhookt4.so, found only through libhookt3's RUNPATH. */
int ht4_val(void)
{
	return 44;
}
