import { type UseQueryOptions, useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { LoadState } from './layout.js';

/**
 * The page of an edit form while its record loads (or failed to): the form appears only once
 * the data is there, so nothing typed is overwritten.
 */
export function RecordLoading({
  back,
  backText,
  title,
  error,
}: {
  back: string;
  backText: string;
  title: string;
  error: Error | null | undefined;
}) {
  return (
    <div className="page narrow-page">
      <p className="breadcrumb">
        <Link to={back}>{backText}</Link>
      </p>
      <h1>{title}</h1>
      <LoadState loading={!error} error={error} empty />
    </div>
  );
}

/**
 * An edit page's record: loaded through its query when editing (`id` given), shown as
 * {@link RecordLoading} until it is there; `children` renders the form from it (undefined for a
 * new record), so the form starts from what was loaded and nothing typed is overwritten.
 */
export function WithRecord<T>({
  id,
  query,
  back,
  backText,
  title,
  children,
}: {
  id: number | undefined;
  query: (id: number) => UseQueryOptions<T, Error, T, readonly unknown[]>;
  back: string;
  backText: string;
  title: string;
  children: (record: T | undefined) => ReactNode;
}) {
  const editing = id !== undefined;
  const record = useQuery({ ...query(id ?? 0), enabled: editing });
  if (editing && record.data === undefined) {
    return <RecordLoading back={back} backText={backText} title={title} error={record.error} />;
  }
  return children(record.data);
}
