import { it, expect } from 'vitest';
import { startSamba, AD_BASE } from '../helpers/samba.js';
it('starts', async () => {
  const t0 = Date.now();
  const dc = await startSamba({ ldif: `dn: OU=Staff,${AD_BASE}\nobjectClass: organizationalUnit\nou: Staff\n` });
  console.log('started in', Date.now() - t0, dc.host);
  console.log(dc.tool(['dsacl', 'get', `--objectdn=OU=Staff,${AD_BASE}`]).slice(0, 300));
  await dc.stop();
  console.log('total', Date.now() - t0);
  expect(1).toBe(1);
}, 120000);
