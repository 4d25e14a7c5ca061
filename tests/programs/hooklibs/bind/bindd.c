/* libbindd.so: another bg_val, a dependency of libbinde.so only. */
int bg_val(void);

int bg_val(void)
{
	return 3;
}
