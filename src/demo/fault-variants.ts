import type { SpecificationDetail } from '../../schemas/specifications.js'
import type { DeviceFamily } from './device-types.js'

/** Numbered fault codes are described in fewer languages than the hand-written ones, as vendor codes often are. */
type Translated = Readonly<Record<'eng' | 'fra' | 'deu', string>>

interface FaultFamily {
  family: DeviceFamily
  /** Codes are this, an underscore and a number from 101: `CM_FAULT_101`. */
  prefix: string
  /** How a description names the device: `Cleaning machine fault 101`, `Défaut 101 de la machine…`. */
  subject: Translated
  components: readonly Translated[]
}

export const FIRST_FAULT_NUMBER = 101

/** The families take turns, so every family gets codes as soon as there are three extra codes. */
const FAULT_FAMILIES: readonly FaultFamily[] = [
  {
    family: 'cleaning-machine',
    prefix: 'CM_FAULT',
    subject: { eng: 'Cleaning machine', fra: 'de la machine de nettoyage', deu: 'der Reinigungsmaschine' },
    components: [
      { eng: 'brush motor', fra: 'moteur de brosse', deu: 'Bürstenmotor' },
      { eng: 'suction motor', fra: "moteur d'aspiration", deu: 'Saugmotor' },
      { eng: 'water pump', fra: 'pompe à eau', deu: 'Wasserpumpe' },
      { eng: 'drive motor', fra: 'moteur de traction', deu: 'Fahrmotor' },
      { eng: 'squeegee', fra: 'raclette', deu: 'Sauglippe' },
      { eng: 'charging contacts', fra: 'contacts de charge', deu: 'Ladekontakte' },
      { eng: 'lidar sensor', fra: 'capteur lidar', deu: 'Lidar-Sensor' },
      { eng: 'bumper sensor', fra: 'capteur de pare-chocs', deu: 'Stoßsensor' },
      { eng: 'cliff sensor', fra: 'capteur anti-chute', deu: 'Absturzsensor' },
      { eng: 'side brush', fra: 'brosse latérale', deu: 'Seitenbürste' },
      { eng: 'control board', fra: 'carte de commande', deu: 'Steuerplatine' },
      { eng: 'water valve', fra: "électrovanne d'eau", deu: 'Wasserventil' }
    ]
  },
  {
    family: 'dispenser',
    prefix: 'DISP_FAULT',
    subject: { eng: 'Dispenser', fra: 'du distributeur', deu: 'des Spenders' },
    components: [
      { eng: 'dispensing motor', fra: 'moteur de distribution', deu: 'Ausgabemotor' },
      { eng: 'level sensor', fra: 'capteur de niveau', deu: 'Füllstandssensor' },
      { eng: 'hand sensor', fra: 'capteur de présence des mains', deu: 'Handsensor' },
      { eng: 'cutting blade', fra: 'lame de coupe', deu: 'Abreißmesser' },
      { eng: 'pump', fra: 'pompe', deu: 'Pumpe' },
      { eng: 'cover switch', fra: 'contact du capot', deu: 'Deckelschalter' },
      { eng: 'control board', fra: 'carte de commande', deu: 'Steuerplatine' },
      { eng: 'radio module', fra: 'module radio', deu: 'Funkmodul' }
    ]
  },
  {
    family: 'people-counter',
    prefix: 'PC_FAULT',
    subject: { eng: 'People counter', fra: 'du compteur de personnes', deu: 'des Personenzählers' },
    components: [
      { eng: 'infrared emitter', fra: 'émetteur infrarouge', deu: 'Infrarotsender' },
      { eng: 'infrared receiver', fra: 'récepteur infrarouge', deu: 'Infrarotempfänger' },
      { eng: 'optical lens', fra: 'lentille optique', deu: 'Optik' },
      { eng: 'radio module', fra: 'module radio', deu: 'Funkmodul' },
      { eng: 'real-time clock', fra: 'horloge temps réel', deu: 'Echtzeituhr' },
      { eng: 'memory', fra: 'mémoire', deu: 'Speicher' },
      { eng: 'thermal sensor', fra: 'capteur thermique', deu: 'Wärmesensor' }
    ]
  }
]

/** After every component has had a code, the next round of codes reports another symptom. */
const SYMPTOMS: readonly Translated[] = [
  { eng: 'reports an internal error', fra: 'signale une erreur interne', deu: 'meldet einen internen Fehler' },
  { eng: 'does not respond', fra: 'ne répond pas', deu: 'reagiert nicht' },
  { eng: 'reports readings out of range', fra: 'signale des valeurs hors plage', deu: 'meldet Werte außerhalb des zulässigen Bereichs' }
]

export interface FaultVariant {
  code: string
  family: DeviceFamily
  details: SpecificationDetail[]
}

/** The index-th numbered fault code (0 is CM_FAULT_101, 1 is DISP_FAULT_101, …), with its texts. */
export function faultVariant (index: number): FaultVariant {
  const family = FAULT_FAMILIES[index % FAULT_FAMILIES.length]!
  const position = Math.floor(index / FAULT_FAMILIES.length)
  const number = FIRST_FAULT_NUMBER + position
  const component = family.components[position % family.components.length]!
  const symptom = SYMPTOMS[Math.floor(position / family.components.length) % SYMPTOMS.length]!
  return {
    code: `${family.prefix}_${number}`,
    family: family.family,
    details: [
      {
        language: 'eng',
        description: `${family.subject.eng} fault ${number}: ${component.eng}`,
        root_cause: `The ${component.eng} ${symptom.eng}.`,
        solution: `Restart the device; if fault ${number} persists, have the ${component.eng} serviced.`
      },
      {
        language: 'fra',
        description: `Défaut ${number} ${family.subject.fra} : ${component.fra}`,
        root_cause: `Le composant « ${component.fra} » ${symptom.fra}.`,
        solution: `Redémarrer l'appareil ; si le défaut ${number} persiste, faire réviser le composant « ${component.fra} ».`
      },
      {
        language: 'deu',
        description: `Störung ${number} ${family.subject.deu}: ${component.deu}`,
        root_cause: `Die Komponente „${component.deu}“ ${symptom.deu}.`,
        solution: `Gerät neu starten; besteht Störung ${number} weiter, die Komponente „${component.deu}“ warten lassen.`
      }
    ]
  }
}
