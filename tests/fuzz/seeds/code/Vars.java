	public class V {
    @Inject private Service svc;
    private java.util.List<String> names = new java.util.ArrayList<>();
    static { int initLocal = 1; }
    int get() { int local = 2; return local; }
    enum Color { RED("r"), GREEN { void f() {} }; private final String code = ""; }
}
