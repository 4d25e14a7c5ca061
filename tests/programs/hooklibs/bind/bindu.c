/* libbindu.so: built with -fno-plt, so it reaches libbinddat's function
 * and data alike through GLOB_DAT entries. */
extern const char bd_name[];
extern const int bd_table[4];
int bd_fn(int x);
int bu_read(void);

int bu_read(void)
{
	return bd_fn(bd_table[2]) + bd_name[0];
}
