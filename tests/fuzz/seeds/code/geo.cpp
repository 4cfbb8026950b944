#include <vector>
namespace geo {
class Shape {
 public:
  virtual ~Shape() {}
  double area() const { return 0; }
  virtual void draw(int) = 0;
};
template <typename T> T twice(T v) { return v + v; }
double total(const std::vector<Shape*>& v) {
  auto s = R"x(raw "(" string)x";
  return twice<double>(v.size());
}
}  // namespace geo
