#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer Buf { int data[]; };

int C(int x) {
  int y = x * x;
  return y;
}

int B(int x) {
  int y = x + 2;
  return C(y) * 2;
}

int A(int x) {
  int y = B(x + 1);
  int z = B(y) + B(y + 1);
  return x + y + z;
}

void main() {
  data[0] = A(data[0]);
}
