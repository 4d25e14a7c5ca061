/* libbindg.so: the global scope's bg_val. */
int bg_val(void);

int bg_val(void)
{
	return 1;
}
