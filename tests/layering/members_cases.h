#pragma once
// Cases for tools/check-members (ctest members_cases): each class's expected count of non-static
// data members is the number after `expect:` on the line of its head (clang's FieldDecls agree).
#include <functional>
#include <map>
#include <vector>

namespace cases {

struct Plain {                   // expect: 4
  int a = 0, b = 1;              // two declarators with initializers
  std::map<int, int> m;          // a comma inside <> is not a declarator
  double (*callback)(int, int);  // a function pointer is data
};

class Functions {  // expect: 2
 public:
  Functions() : x_(1), y_{2} {}  // a constructor with a mem-initializer list
  int x() const { return x_; }
  bool operator==(const Functions&) const = default;
  virtual void f(std::vector<int> v, int n = 3) = 0;
  template <class T>
  T get() const {
    return T{};
  }
  static int counter;             // static: not counted
  static constexpr int kMax = 4;  // nor this
  using Alias = int;
  friend struct Plain;

 private:
  int x_;
  int y_;
};

struct Outer {    // expect: 4
  struct Inner {  // expect: 5
    int a, b, c, d, e;
  };
  enum class Kind { A, B };
  struct Tag;
  Inner inner;
  std::function<void(int, int)> on_event = [](int a, int) {
    struct Local {  // expect: 1
      int z;
    };
    (void)a;
  };
  struct {  // expect: 2
    int u, v;
  } pair, other;
};

union Bits {  // expect: 2
  unsigned word;
  unsigned char bytes[4];
};

}  // namespace cases
