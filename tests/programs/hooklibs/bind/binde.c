/* libbinde.so: needs libbindd.so; loaded with RTLD_DEEPBIND, its lazy
 * call binds to libbindd's bg_val, not the global scope's. */
int bg_val(void);
int be_call(void);

int be_call(void)
{
	return bg_val();
}
