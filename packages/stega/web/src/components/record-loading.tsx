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
