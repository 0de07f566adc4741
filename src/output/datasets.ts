/**
 * Datasets as `ckql datasets` and the REPL's `.datasets` print them: at a
 * terminal, each dataset on a line (name, title, organisation, last
 * modified) with its resources under it (a ✓ where the datastore holds the
 * records, the id, the format); as json/ndjson, one object per dataset;
 * as csv/markdown, one row per resource.
 */
import type { DatasetSummary } from '../client/discovery.js';
import type { Row } from '../datastore/types.js';
import { formatRecords } from './format-records.js';
import type { OutputFormat } from './format-records.js';
import { escapeInvisible } from './safe-text.js';
import { truncate } from './table/layout.js';

export interface DatasetsTextOptions {
  readonly color: boolean;
  /** terminal columns */
  readonly width: number;
  /** json: indented, for a person */
  readonly pretty: boolean;
}

/** A dataset as json/ndjson print it. */
export function datasetRecord(dataset: DatasetSummary): Row {
  return {
    name: dataset.name,
    title: dataset.title,
    organization: dataset.organization ?? null,
    modified: dataset.modified ?? null,
    resources: dataset.resources.map((resource) => ({ id: resource.id, name: resource.name, format: resource.format, datastore_active: resource.datastoreActive })),
  };
}

/** The rows of csv/markdown: one per resource (a dataset without resources gets one row). */
function resourceRows(datasets: readonly DatasetSummary[]): Row[] {
  return datasets.flatMap((dataset): Row[] => {
    const head = { dataset: dataset.name, title: dataset.title, organization: dataset.organization ?? null, modified: dataset.modified ?? null };
    if (dataset.resources.length === 0) return [{ ...head, resource: null, resource_id: null, format: null, datastore_active: null }];
    return dataset.resources.map((resource) => ({ ...head, resource: resource.name, resource_id: resource.id, format: resource.format, datastore_active: resource.datastoreActive }));
  });
}

const RESOURCE_FIELDS = [
  { id: 'dataset', type: 'text' }, { id: 'title', type: 'text' }, { id: 'organization', type: 'text' }, { id: 'modified', type: 'timestamp' },
  { id: 'resource', type: 'text' }, { id: 'resource_id', type: 'text' }, { id: 'format', type: 'text' }, { id: 'datastore_active', type: 'bool' },
] as const;

/**
 * Datasets as text in `format`.
 * @example
 * await datasetsText([{ name: 'air-quality', title: 'Air quality', organization: 'Environment', modified: '2024-03-01T10:00:00',
 *   id: '…', resources: [{ id: '5f1e…', name: 'measurements 2023', format: 'CSV', datastoreActive: true }] }], 'table', { color: false, width: 80, pretty: true })
 * // 'air-quality  Air quality · Environment · modified 2024-03-01\n  ✓ measurements 2023  5f1e…  CSV\n'
 */
export async function datasetsText(datasets: readonly DatasetSummary[], format: OutputFormat, options: DatasetsTextOptions): Promise<string> {
  switch (format) {
    case 'json':
      return `${JSON.stringify(datasets.map(datasetRecord), null, options.pretty ? 2 : undefined)}\n`;
    case 'ndjson':
      return datasets.map((dataset) => `${JSON.stringify(datasetRecord(dataset))}\n`).join('');
    case 'csv':
    case 'markdown': {
      const rows = resourceRows(datasets);
      return formatRecords(
        { resource_id: '', fields: RESOURCE_FIELDS, records: rows, total: rows.length, total_was_estimated: false, limit: rows.length, include_total: true, records_format: 'objects' },
        format,
        { color: false, width: options.width },
      );
    }
    case 'table':
      return datasetsView(datasets, options);
  }
}

/** The terminal view: a line per dataset, its resources indented under it. */
function datasetsView(datasets: readonly DatasetSummary[], options: DatasetsTextOptions): string {
  const bold = (text: string): string => (options.color ? `\x1b[1m${text}\x1b[22m` : text);
  const dim = (text: string): string => (options.color ? `\x1b[2m${text}\x1b[22m` : text);
  const green = (text: string): string => (options.color ? `\x1b[32m${text}\x1b[39m` : text);
  const width = Number.isFinite(options.width) ? options.width : Number.POSITIVE_INFINITY;
  const lines: string[] = [];
  for (const dataset of datasets) {
    const about = [
      dataset.title === dataset.name ? undefined : escapeInvisible(dataset.title),
      dataset.organization === undefined ? undefined : escapeInvisible(dataset.organization),
      dataset.modified === undefined ? undefined : `modified ${dataset.modified.slice(0, 10)}`,
    ].filter((part) => part !== undefined);
    const name = escapeInvisible(dataset.name);
    lines.push(bold(name) + (about.length === 0 ? '' : `  ${truncate(about.join(' · '), Math.max(10, width - name.length - 3))}`));
    const nameWidth = Math.min(40, Math.max(0, ...dataset.resources.map((resource) => escapeInvisible(resource.name).length)));
    for (const resource of dataset.resources) {
      const mark = resource.datastoreActive ? green('✓') : dim('·');
      const shown = truncate(escapeInvisible(resource.name), nameWidth).padEnd(nameWidth);
      lines.push(`  ${mark} ${shown}  ${dim(resource.id)}${resource.format === '' ? '' : `  ${escapeInvisible(resource.format)}`}`);
    }
    if (dataset.resources.length === 0) lines.push(dim('  (no resources)'));
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
