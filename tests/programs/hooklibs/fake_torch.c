/*
 * fake_torch.c - a stand-in libtorch_cpu (built as libtorch_cpu.so.<release>
 * with that soname) with the shape of what mxprof uses of PyTorch: the
 * operator entry point at::_ops::conv2d::call, at::addGlobalCallback
 * taking a RecordFunctionCallback by value (40 bytes: start, end, sampling
 * probability, 10 scope flags, 3 more flags), at::RecordFunction::name(),
 * the autograd engine's exported evaluate_function, which the library
 * calls through its own PLT, and at::_ops::detach::redispatch, which
 * detach's autograd kernel calls through the PLT inside its FUNCTION range
 * "detach", and the next kernel (ADInplaceOrView's) calls again; and the
 * operator detach_ (at::_ops::detach_::call), whose autograd kernel calls
 * the exported materialize_autograd_meta through the PLT inside its range
 * "detach_", as the operator conv2d does outside any. A range runs the start
 * callbacks registered for its scope (start returns a std::unique_ptr through a
 * hidden pointer), its body, then the end callbacks, as PyTorch's
 * RecordFunction does. It lets the tests check the annotations and autograd
 * rows, and a release mxprof does not know, without PyTorch.
 */
#include <stddef.h>

struct callback {
	void **(*start)(void **ret, const void *rf);
	void (*end)(const void *rf, void *ctx);
	double sampling_prob;
	unsigned char scopes[10];
	unsigned char needs_inputs, needs_outputs, needs_ids;
};

_Static_assert(sizeof(struct callback) == 40, "the C++ class's size");

struct record_function {
	const char *name;
	int scope;
};

enum { FUNCTION = 0, BACKWARD_FUNCTION = 1, USER_SCOPE = 7 };

static struct callback cbs[8];
static int ncbs;

/* The operators' names, as libtorch_cpu's read-only data holds them. */
const char fake_torch_schema[] = "aten::conv2d(Tensor input) -> Tensor";
const char fake_torch_schema_d[] = "aten::detach_(Tensor(a!) self)";

unsigned long add_global_callback(struct callback cb) __asm__(
	"_ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE");
const char *rf_name(const struct record_function *rf) __asm__(
	"_ZNK2at14RecordFunction4nameEv");
int conv2d_call(int x) __asm__("_ZN2at4_ops6conv2d4callEv");
void *
detach__call(void *tensor,
	     int autograd) __asm__("_ZN2at4_ops7detach_4callERNS_6TensorE");
void *
materialize(const void *tensor) __asm__("_ZN5torch8autograd4impl25materialize_"
					"autograd_metaERKN2at10TensorBaseE");
void *
detach_redispatch(void *ret, unsigned long keys, const void *tensor) __asm__(
	"_ZN2at4_ops6detach10redispatchEN3c1014DispatchKeySetERKNS_"
	"6TensorE");
void evaluate_function(
	void *engine, void *task, void *node, void *inputs,
	void *queue) __asm__("_ZN5torch8autograd6Engine17evaluate_"
			     "functionERSt10shared_"
			     "ptrINS0_9GraphTaskEEPNS0_4NodeERNS0_"
			     "11InputBufferERKS2_INS0_"
			     "10ReadyQueueEE");

unsigned long add_global_callback(struct callback cb)
{
	if (ncbs < 8) {
		cbs[ncbs++] = cb;
	}
	return (unsigned long)ncbs;
}

const char *rf_name(const struct record_function *rf)
{
	return rf->name;
}

void *materialize(const void *tensor)
{
	__asm__ volatile("" ::: "memory");
	return (void *)tensor;
}

/* An operator whose output needs autograd's data, as most do. */
int conv2d_call(int x)
{
	materialize(&x);
	return x + 1;
}

static void begin(const struct record_function *rf)
{
	for (int i = 0; i < ncbs; i++) {
		void *ctx = (void *)1;

		if (cbs[i].scopes[rf->scope] && cbs[i].start) {
			cbs[i].start(&ctx, rf);
			if (ctx) {
				__builtin_trap(); /* no context was asked for */
			}
		}
	}
}

static void end(const struct record_function *rf)
{
	for (int i = 0; i < ncbs; i++) {
		if (cbs[i].scopes[rf->scope] && cbs[i].end) {
			cbs[i].end(rf, NULL);
		}
	}
}

/* A record_function range named name around ops operator calls. */
int fake_torch_range(const char *name, int ops)
{
	struct record_function rf = {name, USER_SCOPE};
	int v = 0;

	begin(&rf);
	for (int i = 0; i < ops; i++) {
		v += conv2d_call(i);
	}
	end(&rf);
	return v;
}

/* A range opened, as Python's record_function.__enter__ does, closed by
 * fake_torch_close() (or never). */
static struct record_function pool[8];
static int npool;

void *fake_torch_open(const char *name)
{
	struct record_function *rf = &pool[npool++ % 8];

	rf->name = name;
	rf->scope = USER_SCOPE;
	begin(rf);
	return rf;
}

void fake_torch_close(void *rf)
{
	end(rf);
}

/* ADInplaceOrView's kernel: redispatches, through the PLT, to the
 * backend's (keys 1). */
__attribute__((noinline)) static void
inplace_kernel(void *ret, unsigned long keys, const void *tensor)
{
	detach_redispatch(ret, keys - 1, tensor);
	__asm__ volatile("" ::: "memory");
}

/* The kernel for keys: 2 stands for ADInplaceOrView's, 1 the backend's. */
void *detach_redispatch(void *ret, unsigned long keys, const void *tensor)
{
	if (keys > 1) {
		inplace_kernel(ret, keys, tensor);
	}
	return ret;
}

/* detach_'s autograd kernel: its range of scope FUNCTION, and autograd's
 * data through the PLT inside it. */
__attribute__((noinline)) static void detach__kernel(void *tensor)
{
	struct record_function rf = {"detach_", FUNCTION};

	begin(&rf);
	materialize(tensor);
	end(&rf);
}

/* The operator detach_: its autograd kernel, or (inference mode) the
 * backend's, which does nothing. */
void *detach__call(void *tensor, int autograd)
{
	if (autograd) {
		detach__kernel(tensor);
	}
	return tensor;
}

/* detach: with autograd, its kernel's range of scope FUNCTION "detach"
 * around the redispatch; without (inference mode), ADInplaceOrView's
 * kernel alone. */
void fake_torch_detach(int autograd)
{
	struct record_function rf = {"detach", FUNCTION};
	static const int tensor = 1;
	void *ret[1];

	if (!autograd) {
		detach_redispatch(ret, 1, &tensor);
		return;
	}
	begin(&rf);
	detach_redispatch(ret, 2, &tensor);
	end(&rf);
}

void evaluate_function(void *engine, void *task, void *node, void *inputs,
		       void *queue)
{
	struct record_function rf = {(const char *)node, BACKWARD_FUNCTION};

	(void)engine, (void)task, (void)inputs, (void)queue;
	begin(&rf);
	conv2d_call(0);
	end(&rf);
	conv2d_call(1);
}

/* The backward pass: the engine evaluates node (its name) through the
 * PLT, as libtorch_cpu calls its exported evaluate_function. */
void fake_torch_backward(const char *node)
{
	evaluate_function(NULL, NULL, (void *)node, NULL, NULL);
}
