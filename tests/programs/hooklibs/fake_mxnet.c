/*
 * fake_mxnet.c - a stand-in libmxnet.so (soname libmxnet.so) with the
 * shape of MXNet's C API: MX* functions return 0 on success and -1 on
 * failure, and MXGetLastError returns a string. It lets the tests check
 * the @auto default, the @mxnet preset and status handling without MXNet.
 */
static const char *last = "";

int MXGetVersion(int *out)
{
	*out = 10900;
	return 0;
}

int MXNDArrayCreate(int ndim, void **out)
{
	if (ndim < 0) {
		last = "ndim must not be negative";
		return -1;
	}
	*out = (void *)(long)(ndim + 1);
	return 0;
}

const char *MXGetLastError(void)
{
	return last;
}
