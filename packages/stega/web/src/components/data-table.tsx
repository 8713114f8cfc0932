import type { HTMLAttributes, ReactNode } from 'react';
import { TableRegion } from './layout.js';

/** One column of a {@link DataTable}: its header, and the cell of each row. */
export interface Column<T> {
  header: ReactNode;
  /** The cell's `data-label` (its header on a narrow screen); the header's text by default, null for none. */
  label?: string | null;
  /** Right-aligned figures: header and cells. */
  num?: boolean;
  /** Classes of the cells. */
  className?: string;
  cell: (row: T) => ReactNode;
}

/**
 * A table of rows in a scrollable, labelled region: a header per column, a row per item, each
 * cell labelled for the narrow-screen layout (`responsive`).
 */
export function DataTable<T>({
  label,
  className,
  caption,
  columns,
  rows,
  rowKey,
  rowProps,
}: {
  /** The region's accessible name. */
  label: string;
  /** Classes of the table besides `responsive`. */
  className?: string;
  caption?: ReactNode;
  columns: Column<T>[];
  rows: readonly T[];
  rowKey: (row: T) => string | number;
  /** Attributes of a row (`data-…` for tests and styles, its class). */
  rowProps?: (row: T) => HTMLAttributes<HTMLTableRowElement> & Record<`data-${string}`, unknown>;
}) {
  const labelOf = (c: Column<T>) =>
    c.label === null
      ? undefined
      : (c.label ?? (typeof c.header === 'string' ? c.header : undefined));
  const cellClass = (c: Column<T>) =>
    [c.num ? 'num' : '', c.className ?? ''].filter(Boolean).join(' ') || undefined;
  return (
    <TableRegion label={label}>
      <table className={className ? `${className} responsive` : 'responsive'}>
        {caption}
        <thead>
          <tr>
            {columns.map((c, i) => (
              // columns are fixed per table: their place is their identity
              <th key={i} scope="col" className={c.num ? 'num' : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} {...rowProps?.(row)}>
              {columns.map((c, i) => (
                <td key={i} data-label={labelOf(c)} className={cellClass(c)}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableRegion>
  );
}

/** A row of headline figures (`dl.figures`): a term and its value each. */
export function Figures({
  items,
  label,
}: {
  items: [term: ReactNode, value: ReactNode][];
  /** The list's accessible name, when the page has several. */
  label?: string;
}) {
  return (
    <dl className="figures" aria-label={label}>
      {items.map(([term, value], i) => (
        <div key={i}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
