using System;
using static System.Math;
using IO = System.IO;

namespace Acme.Billing
{
    public readonly record struct Money(long Cents);
    public delegate void Posted(object sender, Money amount);

    public interface ILedger
    {
        void Post(Money amount);
        int Count { get; }
    }

    [Serializable]
    public sealed class Ledger : ILedger
    {
        #region Native helpers
        [DllImport("ledger.so", EntryPoint = "ledger_sum")]
        private static extern long Sum(long[] cents, int n);
        #endregion

        public Ledger() : this(16) { }

        public int Count => n;

        public string Name { get; set; } = "main";

        public void Post(Money amount)
        {
            var note = @"C:\dir ""q"" fake(1)";
            var msg = $"via ghost({amount.Cents})";
            var raw = """
                phantom(2) "x"
                """;
            Log(Convert<string>(msg + note + raw));
        }

        public T First<T>(Func<Money, T> f) where T : new() => f(default);

        private static void Log(string s) => Console.WriteLine(s);
    }
}
