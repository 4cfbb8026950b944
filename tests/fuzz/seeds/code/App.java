	package app;
import java.util.List;
public class App {
  interface Listener { void changed(int v) throws Exception; }
  @Override public String toString() { return "App(" + n + ")"; }
  static <T> T first(List<T> v) { return v.get(0); }
}
