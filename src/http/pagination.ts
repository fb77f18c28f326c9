import { Type, type Static, type TSchema } from 'typebox';

/** compatibility.md §2: 30 items per page. */
export const PER_PAGE = 30;
/** Keeps `(page - 1) * perPage` an exact, index-friendly integer on both dialects. */
export const MAX_PAGE = 1_000_000;

export const PageQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: 'Page number, from 1. A page past the end is an empty page, not an error.' })),
});
export type PageQuery = Static<typeof PageQuery>;

export const PageLinks = Type.Object(
  {
    first: Type.String(),
    last: Type.String(),
    prev: Type.Union([Type.String(), Type.Null()]),
    next: Type.Union([Type.String(), Type.Null()]),
  },
  { description: 'Absolute URLs with `?page=N`.' },
);

export const PageMeta = Type.Object(
  {
    current_page: Type.Integer(),
    from: Type.Integer({ description: 'Position of the first item of this page (from 1); 0 on an empty page.' }),
    last_page: Type.Integer({ description: 'At least 1.' }),
    path: Type.String({ description: 'Absolute URL of the list, without query.' }),
    per_page: Type.Integer(),
    to: Type.Integer({ description: 'Position of the last item of this page; 0 on an empty page.' }),
    total: Type.Integer(),
  },
);

/** `{data, links, meta}`, Laravel's paginated resource collection (spec §2 "Pagination objects"). */
export function Paginated<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), links: PageLinks, meta: PageMeta });
}

export interface Page<T> {
  data: T[];
  links: Static<typeof PageLinks>;
  meta: Static<typeof PageMeta>;
}

/**
 * Builds links and meta as Laravel's LengthAwarePaginator does (prev of a page past the end is the
 * page before it; next is null there), except that `from`/`to` stay integers (0) on an empty page
 * so that strictly typed clients keep parsing (compatibility.md §2: "the same meta/links shape").
 */
export function paginate<T>(data: T[], p: { page: number; perPage: number; total: number; path: string }): Page<T> {
  const lastPage = Math.max(1, Math.ceil(p.total / p.perPage));
  const url = (n: number) => `${p.path}?page=${n}`;
  const from = data.length ? (p.page - 1) * p.perPage + 1 : 0;
  return {
    data,
    links: {
      first: url(1),
      last: url(lastPage),
      prev: p.page > 1 ? url(p.page - 1) : null,
      next: p.page < lastPage ? url(p.page + 1) : null,
    },
    meta: {
      current_page: p.page,
      from,
      last_page: lastPage,
      path: p.path,
      per_page: p.perPage,
      to: data.length ? from + data.length - 1 : 0,
      total: p.total,
    },
  };
}
