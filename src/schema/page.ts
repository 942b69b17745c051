/** The generic page type: every list returns `{ items, total, page, limit }` (REST: `data` + `meta`). */
import { Field, Int, ObjectType, type ClassType } from 'type-graphql';

export interface PageShape<T> {
  items: T[];
  total: number;
  page: number;
  limit: number;
}

export function Paginated<T extends object>(itemType: ClassType<T>) {
  @ObjectType({ simpleResolvers: true })
  abstract class PageClass implements PageShape<T> {
    @Field(() => [itemType])
    items!: T[];

    @Field(() => Int, { description: 'Total number of items over all pages.' })
    total!: number;

    @Field(() => Int)
    page!: number;

    @Field(() => Int)
    limit!: number;
  }
  return PageClass;
}

/** A service's `{ items, meta }` as a GraphQL page. */
export const toPage = <T>(p: { items: T[]; meta: { total: number; page: number; limit: number } }): PageShape<T> => ({ items: p.items, ...p.meta });
