#include <libsched/libsched.hpp>
int main() { libsched::Cluster c; return c.size() == 0 ? 0 : 1; }
