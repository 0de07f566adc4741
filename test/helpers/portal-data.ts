/**
 * Local data laid out as a portal's catalogue, for the discovery, dictionary
 * and export tests: a folder with a Frictionless `datapackage.json` (one
 * dataset, its Table Schemas declaring types and labels) and a folder of
 * loose files (another dataset), one of them with a CKAN fields file
 * beside it (types, a data dictionary, an id and aliases, its own `_id`s).
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PortalData {
  readonly root: string;
  /** the package's folder: dataset `air-quality` */
  readonly airQuality: string;
  /** the loose folder: dataset `city-budget` */
  readonly cityBudget: string;
}

/** The id the fields file of `spending.csv` gives its resource. */
export const SPENDING_ID = 'c0ffee00-1111-4222-8333-444455556666';

export function writePortalData(): PortalData {
  const root = mkdtempSync(join(tmpdir(), 'ckql-portal-'));
  const airQuality = join(root, 'air-quality');
  const cityBudget = join(root, 'City Budget');
  mkdirSync(airQuality);
  mkdirSync(cityBudget);
  writeFileSync(
    join(airQuality, 'datapackage.json'),
    JSON.stringify({
      name: 'air-quality',
      title: 'Air quality',
      description: 'Daily means at the city stations.',
      resources: [
        {
          name: 'measurements-2023',
          title: 'measurements 2023',
          path: 'measurements.csv',
          format: 'csv',
          schema: {
            fields: [
              { name: 'station', type: 'string', title: 'Station' },
              { name: 'day', type: 'date', title: 'Day' },
              { name: 'pm10', type: 'number', title: 'PM10', description: 'µg/m³, **daily mean**.\n\nMeasured by gravimetry.' },
              { name: 'valid', type: 'boolean' },
              { name: 'count', type: 'integer' },
            ],
            primaryKey: ['station', 'day'],
          },
        },
        { name: 'stations', path: 'stations.json', schema: { fields: [{ name: 'station', type: 'string' }, { name: 'opened', type: 'datetime' }, { name: 'tags', type: 'array' }] } },
      ],
    }),
  );
  writeFileSync(
    join(airQuality, 'measurements.csv'),
    'station,day,pm10,valid,count\nA,2023-01-01,12.5,true,24\nA,2023-01-02,40,false,23\nB,2023-01-01,7.25,yes,24\nB,2023-01-02,,no,3000000000\n',
  );
  writeFileSync(
    join(airQuality, 'stations.json'),
    JSON.stringify([
      { station: 'A', opened: '2001-05-01T08:00:00', tags: ['urban', 'traffic'] },
      { station: 'B', opened: '1999-12-31 23:59:59', tags: [] },
    ]),
  );
  // xloader's portal: every column text, the dictionary saying what they hold.
  writeFileSync(join(cityBudget, 'spending.csv'), '_id,year,department,amount,note\n3,2019,parks,1200.50,""\n7,2020,schools,900,\n11,2021,parks,15000,"a, b"\n');
  writeFileSync(
    join(cityBudget, 'spending.fields.json'),
    JSON.stringify({
      resource_id: SPENDING_ID,
      aliases: ['spending', 'budget-spending'],
      fields: [
        { id: 'year', type: 'text', info: { label: 'Year', notes: 'The budget year.', type_override: 'int' } },
        { id: 'department', type: 'text', info: { label: 'Department' } },
        { id: 'amount', type: 'text', info: { label: 'Amount', notes: 'In euros.', type_override: 'numeric' } },
        { id: 'note', type: 'text' },
      ],
    }),
  );
  writeFileSync(join(cityBudget, 'revenue.csv'), 'year,source,amount\n2020,taxes,5000\n2021,fees,700\n');
  return { root, airQuality, cityBudget };
}
