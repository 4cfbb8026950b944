import { x } from "./x";
export const API = "v1", OTHER = 2;
let counter = 0;
const handler = (e: Event) => { const inner = 1; return inner; };
function run() {
  const local = 1;
  let other = compute(
    local,
  );
  return other;
}
const config = {
  port: 8080,
  host: "x"
};
export class Store<T> {
  private items: T[] = [];
  static readonly MAX = 10;
  #secret = 1;
  name?: string;
  onChange = () => {
    this.items = [];
  };
  constructor(private readonly svc: Svc) {}
  get size(): number { return this.items.length; }
  add(item: T): void {
    const tmp = item;
    this.items.push(tmp);
  }
}
interface Opts {
  verbose: boolean;
  level?: number;
  run(x: number): void;
}
enum Dir { Up = 1, Down, Left = "L" }
(function () { var hidden = 1; })();
