// Values firmware ships in place of a machine's own identity. A signed config bound to one of them (spec.match) is
// bound to every machine with the same firmware default, so they are refused where the binding is written.
// Serial numbers: the "meaningless names" systemd filters out of DMI data (systemd hwdb.d/20-dmi-id.hwdb,
// ID_*_IS_RUBBISH: "Default string", "N/A", "O.E.M.", "OEM", "To be filled by O.E.M.", "System manufacturer"), with
// the serial-field defaults of the same BIOS families ("System Serial Number", "Chassis Serial Number", "Not
// Specified", "None") and a number or letter repeated. System UUIDs: all zeros, all ones, and the AMI default
// 03000200-0400-0500-0006-000700080009 that many boards ship (as public DMI dumps show), also in the byte order Linux
// shows it in from firmware older than SMBIOS 2.6, which stores the first three fields big-endian (00020003-0004-0005-…;
// the kernel prints product_uuid in the order of the SMBIOS version the firmware declares: torvalds/linux
// drivers/firmware/dmi_scan.c dmi_save_uuid, %pUl from 2.6, %pUb before).

/** Lower case, without spaces and punctuation: "To Be Filled By O.E.M." and "tobefilledbyoem" are one. */
const squeeze = (s: string) => s.toLowerCase().replace(/[\s._\-/]/g, '');

const PLACEHOLDER_SERIALS = new Set(
  ['To Be Filled By O.E.M.', 'To be filled by OEM', 'Default string', 'N/A', 'NA', 'O.E.M.', 'OEM', 'System Serial Number', 'Chassis Serial Number', 'Base Board Serial Number', 'Not Specified', 'Not Applicable', 'Not Available', 'None', 'Unknown', 'Serial', '0123456789', '123456789', '1234567890'].map(squeeze),
);

const PLACEHOLDER_UUIDS = new Set(['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '03000200-0400-0500-0006-000700080009', '00020003-0004-0005-0006-000700080009']);

/** Whether `serial` is a firmware default rather than a machine's own serial number. */
export function placeholderSerial(serial: string): boolean {
  const s = squeeze(serial);
  return PLACEHOLDER_SERIALS.has(s) || /^(.)\1*$/.test(s);
}

export function placeholderUuid(uuid: string): boolean {
  return PLACEHOLDER_UUIDS.has(uuid.trim().toLowerCase());
}
