import type { Response } from 'express';
import type { Paginated } from '../validation/pagination.js';

export function sendData(res: Response, data: unknown, status = 200): void {
  res.status(status).json({ data });
}

export function sendList<T>(res: Response, page: Paginated<T>, present: (t: T) => unknown): void {
  res.status(200).json({ data: page.items.map(present), meta: page.meta });
}

export function sendNoContent(res: Response): void {
  res.status(204).end();
}
