/*
 * fake_torch_main.c - a training "step" against fake_torch.c: 3 steps,
 * each with my_block around 2 operators, a backward pass of two nodes
 * and Optimizer.step#SGD.step; then a range whose end is never seen,
 * inside one that ends, and detach and detach_: each twice with autograd,
 * once without.
 */
#include <stdio.h>

int fake_torch_range(const char *name, int ops);
void *fake_torch_open(const char *name);
void fake_torch_close(void *rf);
void fake_torch_backward(const char *node);
void fake_torch_detach(int autograd);
void *
detach__call(void *tensor,
	     int autograd) __asm__("_ZN2at4_ops7detach_4callERNS_6TensorE");

int main(void)
{
	int v = 0;

	for (int i = 0; i < 3; i++) {
		v += fake_torch_range("my_block", 2);
		fake_torch_backward("AddmmBackward0");
		fake_torch_backward("torch::autograd::AccumulateGrad");
		v += fake_torch_range("Optimizer.step#SGD.step", 1);
	}
	void *outer = fake_torch_open("outer");

	fake_torch_open("leaked"); /* its end is never seen */
	fake_torch_close(outer);
	fake_torch_detach(1);
	fake_torch_detach(0);
	fake_torch_detach(1);
	detach__call(&v, 1);
	detach__call(&v, 0);
	detach__call(&v, 1);
	printf("v %d\n", v);
	return 0;
}
