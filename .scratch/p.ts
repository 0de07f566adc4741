import { parse } from '../src/syntax/parse.ts';
import { format } from '../src/format.ts';
const qs = [
 'from courses where credits >= 7 group by subject select subject, count(*) as n, avg(credits) having n > 3 order by n desc limit 10',
 'from courses group by subject',
 'from enrolments e join courses c on e.course = c.code where c.subject = math group by c.subject, month(e.enrolled_on) select c.subject, month(e.enrolled_on) as month, count(*), count(distinct e.student)',
 'from courses where stage = active facet subject top 20, start_date by month',
 'from t as group select count, count(count) as x order by count(*) desc',
 'from courses c select c.`school year`, bucket(credits, 2.5)',
 'from courses wher subject = math',
 'from courses where count(*) > 1',
 'from courses select *',
 'from a left join b on a.x = b.y and a.z = b.w select a.q',
];
for (const q of qs) { try { const a = parse(q); console.log(format(a)); console.log('--'); } catch (e) { console.log('ERR', (e as {code?: string}).code, (e as Error).message, (e as {hint?: string}).hint); } }
