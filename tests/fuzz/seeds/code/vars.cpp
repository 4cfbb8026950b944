namespace geo {
int count_a, *count_b[3], count_c = 4;
static const std::map<int, int> table = {{1, 2}};
void (*handler)(int) = nullptr;
int Shape::instances = 0;
struct foo;
struct foo *fp;
class Shape {
 public:
  int x : 3;
  static constexpr int kMax = 7;
  std::vector<int> items_;
  void draw() const;
  Shape(int);
  union { int i; float f; };
  friend class Other;
  using T = int;
  Q_OBJECT
};
enum class Color : uint8_t { Red = 1, Green, Blue = Red | Green };
typedef enum { E_ONE, E_TWO } e_t;
enum { ANON_A, ANON_B };
auto fn = [](int v) { return v * 2; };
int run(int x) { int local = 3; static int s2; return local + x; }
extern int ext_var;
template <typename T> T zero = T();
}
int a == b;
void f(void) { int local = 1; static int s2; }
struct { int inner_a; } anon_var;
