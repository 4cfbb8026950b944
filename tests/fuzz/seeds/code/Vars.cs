class V {
    private static bool? m_force = null;
    private System.Windows.Forms.Button m_btn;
    public static event EventHandler<EventArgs> Changed;
    public const int Max = 3;
    public static readonly Uuid Id = new Uuid(new byte[] {
        1, 2 });
    int Get() { int local = 1; return local; }
}
enum Mode { [Description("a")] Fast = 1, Slow }
