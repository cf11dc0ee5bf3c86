#include <cstdio>
int main(){}
