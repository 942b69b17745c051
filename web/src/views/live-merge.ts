/**
 * A list that a view loads and keeps live: an item that comes live while a load is under way is newer
 * than what that load answers (the load read the database before it was recorded or changed).
 */
export class LiveMerge<T extends { id: string }> {
  private came = new Map<string, T>();

  /** Call as a load begins. */
  begin(): void {
    this.came = new Map();
  }

  /** Call with each item that comes live. */
  add(item: T): void {
    this.came.set(item.id, item);
  }

  /** The loaded items in their order, each replaced by its live version if one came; then the live ones the load lacks, in the order they came. */
  merge(loaded: T[]): { items: T[]; newer: T[] } {
    const ids = new Set(loaded.map((i) => i.id));
    return { items: loaded.map((i) => this.came.get(i.id) ?? i), newer: [...this.came.values()].filter((i) => !ids.has(i.id)) };
  }
}
