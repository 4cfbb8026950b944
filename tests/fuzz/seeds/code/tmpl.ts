class Store {
  show(): string {
    return `v${this.version.svc} ${fmt(`in ${inner} ${`deep ${x}`}`)}` + `${{a: 1}.a} ${"q}"} ${'}'}`;
  }
}
const t = `unterminated ${a + `b
