/* libbindv.so: bv_get in two versions. Programs linked before BV_2
 * existed keep calling BV_1's, which returns 1. */
int bv_get_1(void);
int bv_get_2(void);

int bv_get_1(void)
{
	return 1;
}

int bv_get_2(void)
{
	return 2;
}

__asm__(".symver bv_get_1, bv_get@BV_1");
__asm__(".symver bv_get_2, bv_get@@BV_2");
