import { x } from "./x";
export interface Store { get(k: string): number; }
export class Mem implements Store {
  private m = new Map<string, number>();
  get(k: string): number { return this.m.get(k) ?? 0; }
}
export const add = (a: number, b: number) => a + b;
const re = /a\/b[/]c/g; const s = `t ${add(1, 2)} x`;
