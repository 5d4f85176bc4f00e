import type { MessageCategory } from '../../schemas/message.js'

/** The languages of the hand-written texts, in the order the specifications file lists them. */
export const BASE_LANGUAGES = ['eng', 'fra', 'deu', 'nld', 'spa'] as const
export type BaseLanguage = typeof BASE_LANGUAGES[number]

/** description, root cause, solution */
export type CodeTexts = readonly [description: string, rootCause: string, solution: string]

export interface BaseMessageCode {
  code: string
  category: MessageCategory
  texts: Readonly<Record<BaseLanguage, CodeTexts>>
}

const NO_ACTION = {
  eng: 'No action needed.',
  fra: 'Aucune action requise.',
  deu: 'Keine Maßnahme erforderlich.',
  nld: 'Geen actie nodig.',
  spa: 'No se requiere ninguna acción.'
} as const

/**
 * The hand-written message codes. A catalog of N codes takes the first N, so the order matters:
 * every entity kind gets a code early, and a code that only follows another (DISP_REFILLED after
 * DISP_LOW_LEVEL) comes after the code that opens its sequence, so every prefix is usable.
 */
export const BASE_MESSAGE_CODES: readonly BaseMessageCode[] = [
  {
    code: 'DISP_LOW_LEVEL',
    category: 'notification',
    texts: {
      eng: ['Refill level low', 'The refill has been used since it was last replaced and is nearly finished.', 'Plan a refill during the next cleaning round.'],
      fra: ['Niveau de recharge bas', 'La recharge a été consommée depuis son dernier remplacement et est presque épuisée.', 'Prévoir une recharge lors de la prochaine tournée de nettoyage.'],
      deu: ['Füllstand niedrig', 'Die Nachfüllung wurde seit dem letzten Wechsel verbraucht und ist fast aufgebraucht.', 'Beim nächsten Reinigungsdurchgang nachfüllen.'],
      nld: ['Vulniveau laag', 'De navulling is sinds de laatste vervanging verbruikt en is bijna op.', 'Plan een navulling in bij de volgende schoonmaakronde.'],
      spa: ['Nivel de recarga bajo', 'La recarga se ha consumido desde su último cambio y está casi agotada.', 'Planificar una recarga en la próxima ronda de limpieza.']
    }
  },
  {
    code: 'DISP_EMPTY',
    category: 'alert',
    texts: {
      eng: ['Dispenser empty', 'The refill is used up; the dispenser can no longer dispense.', 'Replace the refill as soon as possible.'],
      fra: ['Distributeur vide', 'La recharge est épuisée ; le distributeur ne peut plus distribuer.', 'Remplacer la recharge dès que possible.'],
      deu: ['Spender leer', 'Die Nachfüllung ist aufgebraucht; der Spender kann nichts mehr ausgeben.', 'Die Nachfüllung so schnell wie möglich ersetzen.'],
      nld: ['Dispenser leeg', 'De navulling is op; de dispenser kan niets meer afgeven.', 'Vervang de navulling zo snel mogelijk.'],
      spa: ['Dispensador vacío', 'La recarga se ha agotado; el dispensador ya no puede dispensar.', 'Sustituir la recarga lo antes posible.']
    }
  },
  {
    code: 'DISP_REFILLED',
    category: 'notification',
    texts: {
      eng: ['Dispenser refilled', 'A new refill was inserted and detected by the level sensor.', NO_ACTION.eng],
      fra: ['Distributeur rechargé', 'Une nouvelle recharge a été insérée et détectée par le capteur de niveau.', NO_ACTION.fra],
      deu: ['Spender nachgefüllt', 'Eine neue Nachfüllung wurde eingesetzt und vom Füllstandssensor erkannt.', NO_ACTION.deu],
      nld: ['Dispenser bijgevuld', 'Er is een nieuwe navulling geplaatst en door de niveausensor gedetecteerd.', NO_ACTION.nld],
      spa: ['Dispensador recargado', 'Se ha colocado una nueva recarga y el sensor de nivel la ha detectado.', NO_ACTION.spa]
    }
  },
  {
    code: 'PC_THRESHOLD_EXCEEDED',
    category: 'notification',
    texts: {
      eng: ['Visitor threshold exceeded', 'More people than the configured threshold have entered since the last cleaning.', 'Schedule a cleaning round for this space.'],
      fra: ['Seuil de passages dépassé', 'Plus de personnes que le seuil configuré sont entrées depuis le dernier nettoyage.', 'Planifier une tournée de nettoyage pour cet espace.'],
      deu: ['Besucherschwelle überschritten', 'Seit der letzten Reinigung sind mehr Personen eingetreten, als der eingestellte Schwellenwert erlaubt.', 'Einen Reinigungsdurchgang für diesen Raum einplanen.'],
      nld: ['Bezoekersdrempel overschreden', 'Sinds de laatste schoonmaak zijn er meer mensen binnengekomen dan de ingestelde drempel.', 'Plan een schoonmaakronde voor deze ruimte.'],
      spa: ['Umbral de visitantes superado', 'Desde la última limpieza han entrado más personas que el umbral configurado.', 'Programar una ronda de limpieza para este espacio.']
    }
  },
  {
    code: 'CM_CLEANING_STARTED',
    category: 'notification',
    texts: {
      eng: ['Cleaning started', 'The machine started a scheduled or manual cleaning run.', NO_ACTION.eng],
      fra: ['Nettoyage commencé', 'La machine a lancé un cycle de nettoyage programmé ou manuel.', NO_ACTION.fra],
      deu: ['Reinigung gestartet', 'Die Maschine hat einen geplanten oder manuellen Reinigungslauf gestartet.', NO_ACTION.deu],
      nld: ['Schoonmaak gestart', 'De machine is aan een geplande of handmatige schoonmaakronde begonnen.', NO_ACTION.nld],
      spa: ['Limpieza iniciada', 'La máquina ha iniciado un ciclo de limpieza programado o manual.', NO_ACTION.spa]
    }
  },
  {
    code: 'CM_CLEANING_COMPLETED',
    category: 'notification',
    texts: {
      eng: ['Cleaning completed', 'The machine finished its cleaning run.', NO_ACTION.eng],
      fra: ['Nettoyage terminé', 'La machine a terminé son cycle de nettoyage.', NO_ACTION.fra],
      deu: ['Reinigung abgeschlossen', 'Die Maschine hat ihren Reinigungslauf beendet.', NO_ACTION.deu],
      nld: ['Schoonmaak voltooid', 'De machine heeft de schoonmaakronde afgerond.', NO_ACTION.nld],
      spa: ['Limpieza completada', 'La máquina ha terminado su ciclo de limpieza.', NO_ACTION.spa]
    }
  },
  {
    code: 'SPACE_CLEANING_DUE',
    category: 'notification',
    texts: {
      eng: ['Cleaning due', 'The space reached its scheduled cleaning time or its usage limit.', 'Clean the space during the current round.'],
      fra: ['Nettoyage à faire', "L'espace a atteint l'heure de nettoyage prévue ou sa limite d'utilisation.", "Nettoyer l'espace lors de la tournée en cours."],
      deu: ['Reinigung fällig', 'Der Raum hat seinen geplanten Reinigungszeitpunkt oder seine Nutzungsgrenze erreicht.', 'Den Raum im laufenden Durchgang reinigen.'],
      nld: ['Schoonmaak nodig', 'De ruimte heeft het geplande schoonmaaktijdstip of de gebruikslimiet bereikt.', 'Maak de ruimte schoon tijdens de huidige ronde.'],
      spa: ['Limpieza pendiente', 'El espacio ha alcanzado la hora de limpieza programada o su límite de uso.', 'Limpiar el espacio en la ronda actual.']
    }
  },
  {
    code: 'SPACE_CLEANED',
    category: 'notification',
    texts: {
      eng: ['Cleaning confirmed', "Cleaning staff confirmed the cleaning at the space's check-in point.", NO_ACTION.eng],
      fra: ['Nettoyage confirmé', "Le personnel de nettoyage a confirmé le nettoyage au point de pointage de l'espace.", NO_ACTION.fra],
      deu: ['Reinigung bestätigt', 'Das Reinigungspersonal hat die Reinigung am Check-in-Punkt des Raums bestätigt.', NO_ACTION.deu],
      nld: ['Schoonmaak bevestigd', 'Het schoonmaakpersoneel heeft de schoonmaak bevestigd bij het registratiepunt van de ruimte.', NO_ACTION.nld],
      spa: ['Limpieza confirmada', 'El personal de limpieza ha confirmado la limpieza en el punto de registro del espacio.', NO_ACTION.spa]
    }
  },
  {
    code: 'DEV_OFFLINE',
    category: 'alert',
    texts: {
      eng: ['Device offline', 'The device has not reported to the gateway within the expected interval (network outage, flat battery or power loss).', "Check the power supply and the wireless coverage at the device's location."],
      fra: ['Appareil hors ligne', "L'appareil n'a pas communiqué avec la passerelle dans l'intervalle prévu (panne réseau, pile déchargée ou coupure de courant).", "Vérifier l'alimentation et la couverture sans fil à l'emplacement de l'appareil."],
      deu: ['Gerät offline', 'Das Gerät hat sich nicht innerhalb des erwarteten Intervalls beim Gateway gemeldet (Netzwerkausfall, leere Batterie oder Stromausfall).', 'Stromversorgung und Funkabdeckung am Standort des Geräts prüfen.'],
      nld: ['Apparaat offline', 'Het apparaat heeft zich niet binnen de verwachte tijd bij de gateway gemeld (netwerkstoring, lege batterij of stroomuitval).', 'Controleer de stroomvoorziening en het draadloze bereik op de locatie van het apparaat.'],
      spa: ['Dispositivo sin conexión', 'El dispositivo no se ha comunicado con la pasarela en el intervalo previsto (fallo de red, batería agotada o corte de corriente).', 'Comprobar la alimentación y la cobertura inalámbrica en la ubicación del dispositivo.']
    }
  },
  {
    code: 'DEV_ONLINE',
    category: 'notification',
    texts: {
      eng: ['Device back online', 'The device reports to the gateway again.', NO_ACTION.eng],
      fra: ['Appareil de nouveau en ligne', "L'appareil communique de nouveau avec la passerelle.", NO_ACTION.fra],
      deu: ['Gerät wieder online', 'Das Gerät meldet sich wieder beim Gateway.', NO_ACTION.deu],
      nld: ['Apparaat weer online', 'Het apparaat meldt zich weer bij de gateway.', NO_ACTION.nld],
      spa: ['Dispositivo conectado de nuevo', 'El dispositivo vuelve a comunicarse con la pasarela.', NO_ACTION.spa]
    }
  },
  {
    code: 'DEV_BATTERY_LOW',
    category: 'notification',
    texts: {
      eng: ['Battery low', 'The battery voltage dropped below the warning level.', 'Replace the batteries within the next two weeks.'],
      fra: ['Pile faible', "La tension de la pile est passée sous le seuil d'avertissement.", 'Remplacer les piles dans les deux semaines.'],
      deu: ['Batterie schwach', 'Die Batteriespannung ist unter die Warnschwelle gefallen.', 'Batterien innerhalb der nächsten zwei Wochen wechseln.'],
      nld: ['Batterij bijna leeg', 'De batterijspanning is onder het waarschuwingsniveau gedaald.', 'Vervang de batterijen binnen twee weken.'],
      spa: ['Batería baja', 'La tensión de la batería ha bajado del nivel de aviso.', 'Cambiar las pilas en las próximas dos semanas.']
    }
  },
  {
    code: 'DEV_BATTERY_CRITICAL',
    category: 'alert',
    texts: {
      eng: ['Battery critical', 'The battery is nearly flat; the device will soon stop working.', 'Replace the batteries now.'],
      fra: ['Pile critique', "La pile est presque vide ; l'appareil va bientôt cesser de fonctionner.", 'Remplacer les piles immédiatement.'],
      deu: ['Batterie kritisch', 'Die Batterie ist fast leer; das Gerät stellt bald den Betrieb ein.', 'Batterien sofort wechseln.'],
      nld: ['Batterij kritiek', 'De batterij is bijna leeg; het apparaat stopt binnenkort met werken.', 'Vervang de batterijen direct.'],
      spa: ['Batería crítica', 'La batería está casi agotada; el dispositivo dejará de funcionar pronto.', 'Cambiar las pilas inmediatamente.']
    }
  },
  {
    code: 'DEV_BATTERY_REPLACED',
    category: 'notification',
    texts: {
      eng: ['Battery replaced', 'New batteries were detected.', NO_ACTION.eng],
      fra: ['Piles remplacées', 'De nouvelles piles ont été détectées.', NO_ACTION.fra],
      deu: ['Batterie gewechselt', 'Neue Batterien wurden erkannt.', NO_ACTION.deu],
      nld: ['Batterij vervangen', 'Er zijn nieuwe batterijen gedetecteerd.', NO_ACTION.nld],
      spa: ['Pilas sustituidas', 'Se han detectado pilas nuevas.', NO_ACTION.spa]
    }
  },
  {
    code: 'PC_COUNT_RESET',
    category: 'notification',
    texts: {
      eng: ['Visitor count reset', 'The count was reset after the space was cleaned.', NO_ACTION.eng],
      fra: ['Compteur de passages remis à zéro', "Le compteur a été remis à zéro après le nettoyage de l'espace.", NO_ACTION.fra],
      deu: ['Besucherzählung zurückgesetzt', 'Die Zählung wurde nach der Reinigung des Raums zurückgesetzt.', NO_ACTION.deu],
      nld: ['Bezoekerstelling gereset', 'De telling is op nul gezet nadat de ruimte is schoongemaakt.', NO_ACTION.nld],
      spa: ['Recuento de visitantes reiniciado', 'El recuento se ha puesto a cero tras la limpieza del espacio.', NO_ACTION.spa]
    }
  },
  {
    code: 'SPACE_CLEANING_OVERDUE',
    category: 'alert',
    texts: {
      eng: ['Cleaning overdue', 'The space was not cleaned within the agreed time after cleaning became due.', "Send cleaning staff now and review the round's planning."],
      fra: ['Nettoyage en retard', "L'espace n'a pas été nettoyé dans le délai convenu.", 'Envoyer immédiatement le personnel de nettoyage et revoir la planification de la tournée.'],
      deu: ['Reinigung überfällig', 'Der Raum wurde nicht innerhalb der vereinbarten Frist gereinigt.', 'Sofort Reinigungspersonal schicken und die Planung des Durchgangs überprüfen.'],
      nld: ['Schoonmaak te laat', 'De ruimte is niet binnen de afgesproken tijd schoongemaakt.', 'Stuur direct schoonmaakpersoneel en herzie de planning van de ronde.'],
      spa: ['Limpieza atrasada', 'El espacio no se ha limpiado en el plazo acordado.', 'Enviar personal de limpieza de inmediato y revisar la planificación de la ronda.']
    }
  },
  {
    code: 'SPACE_OCCUPANCY_HIGH',
    category: 'notification',
    texts: {
      eng: ['High occupancy', 'More people are in the space than its planned capacity.', 'Check whether extra cleaning or supplies are needed.'],
      fra: ['Forte affluence', "Il y a plus de personnes dans l'espace que sa capacité prévue.", 'Vérifier si un nettoyage ou un réapprovisionnement supplémentaire est nécessaire.'],
      deu: ['Hohe Belegung', 'Im Raum halten sich mehr Personen auf als vorgesehen.', 'Prüfen, ob zusätzliche Reinigung oder Verbrauchsmaterial nötig ist.'],
      nld: ['Hoge bezetting', 'Er zijn meer mensen in de ruimte dan de geplande capaciteit.', 'Controleer of extra schoonmaak of aanvulling van voorraad nodig is.'],
      spa: ['Ocupación elevada', 'Hay más personas en el espacio que su capacidad prevista.', 'Comprobar si hace falta limpieza o reposición adicional.']
    }
  },
  {
    code: 'SPACE_COMPLAINT_REPORTED',
    category: 'alert',
    texts: {
      eng: ['Complaint reported', 'A visitor reported a problem through the feedback panel or QR code.', 'Check the space and deal with the reported problem.'],
      fra: ['Réclamation signalée', 'Un visiteur a signalé un problème via le boîtier de satisfaction ou le QR code.', "Vérifier l'espace et traiter le problème signalé."],
      deu: ['Beschwerde gemeldet', 'Eine Person hat über das Feedback-Terminal oder den QR-Code ein Problem gemeldet.', 'Raum prüfen und das gemeldete Problem beheben.'],
      nld: ['Klacht gemeld', 'Een bezoeker heeft via het feedbackpaneel of de QR-code een probleem gemeld.', 'Controleer de ruimte en los het gemelde probleem op.'],
      spa: ['Queja registrada', 'Un visitante ha informado de un problema mediante el panel de opinión o el código QR.', 'Revisar el espacio y resolver el problema indicado.']
    }
  },
  {
    code: 'SPACE_COMPLAINT_RESOLVED',
    category: 'notification',
    texts: {
      eng: ['Complaint resolved', 'Staff marked the reported problem as resolved.', NO_ACTION.eng],
      fra: ['Réclamation traitée', 'Le personnel a marqué le problème signalé comme résolu.', NO_ACTION.fra],
      deu: ['Beschwerde erledigt', 'Das Personal hat das gemeldete Problem als behoben markiert.', NO_ACTION.deu],
      nld: ['Klacht afgehandeld', 'Het personeel heeft het gemelde probleem als opgelost gemarkeerd.', NO_ACTION.nld],
      spa: ['Queja resuelta', 'El personal ha marcado el problema indicado como resuelto.', NO_ACTION.spa]
    }
  },
  {
    code: 'DISP_JAMMED',
    category: 'alert',
    texts: {
      eng: ['Dispenser jammed', 'Paper is stuck in the dispensing mechanism.', 'Open the dispenser, remove the jammed paper and reload the roll.'],
      fra: ['Distributeur bloqué', 'Du papier est coincé dans le mécanisme de distribution.', 'Ouvrir le distributeur, retirer le papier coincé et remettre le rouleau en place.'],
      deu: ['Spender blockiert', 'Papier steckt im Ausgabemechanismus fest.', 'Spender öffnen, das eingeklemmte Papier entfernen und die Rolle neu einlegen.'],
      nld: ['Dispenser vastgelopen', 'Er zit papier vast in het afgiftemechanisme.', 'Open de dispenser, verwijder het vastgelopen papier en plaats de rol opnieuw.'],
      spa: ['Dispensador atascado', 'Hay papel atascado en el mecanismo de dispensación.', 'Abrir el dispensador, retirar el papel atascado y volver a colocar el rollo.']
    }
  },
  {
    code: 'DEV_FAULT_CLEARED',
    category: 'notification',
    texts: {
      eng: ['Fault cleared', 'The device reports that the previous fault no longer applies.', NO_ACTION.eng],
      fra: ['Défaut résolu', "L'appareil signale que le défaut précédent a disparu.", NO_ACTION.fra],
      deu: ['Störung behoben', 'Das Gerät meldet, dass die vorherige Störung nicht mehr besteht.', NO_ACTION.deu],
      nld: ['Storing opgelost', 'Het apparaat meldt dat de vorige storing niet meer optreedt.', NO_ACTION.nld],
      spa: ['Avería resuelta', 'El dispositivo indica que la avería anterior ya no existe.', NO_ACTION.spa]
    }
  },
  {
    code: 'DISP_COVER_OPEN',
    category: 'alert',
    texts: {
      eng: ['Cover open', 'The dispenser cover has been open for more than five minutes.', 'Close and lock the cover.'],
      fra: ['Capot ouvert', 'Le capot du distributeur est ouvert depuis plus de cinq minutes.', 'Fermer et verrouiller le capot.'],
      deu: ['Abdeckung offen', 'Die Abdeckung des Spenders ist seit mehr als fünf Minuten geöffnet.', 'Abdeckung schließen und verriegeln.'],
      nld: ['Deksel open', 'Het deksel van de dispenser staat al langer dan vijf minuten open.', 'Sluit en vergrendel het deksel.'],
      spa: ['Tapa abierta', 'La tapa del dispensador lleva más de cinco minutos abierta.', 'Cerrar la tapa y bloquearla.']
    }
  },
  {
    code: 'DISP_COVER_CLOSED',
    category: 'notification',
    texts: {
      eng: ['Cover closed', 'The dispenser cover was closed.', NO_ACTION.eng],
      fra: ['Capot fermé', 'Le capot du distributeur a été fermé.', NO_ACTION.fra],
      deu: ['Abdeckung geschlossen', 'Die Abdeckung des Spenders wurde geschlossen.', NO_ACTION.deu],
      nld: ['Deksel gesloten', 'Het deksel van de dispenser is gesloten.', NO_ACTION.nld],
      spa: ['Tapa cerrada', 'Se ha cerrado la tapa del dispensador.', NO_ACTION.spa]
    }
  },
  {
    code: 'SOAP_NOZZLE_BLOCKED',
    category: 'alert',
    texts: {
      eng: ['Soap nozzle blocked', 'Dried soap is blocking the nozzle; the pump runs but dispenses nothing.', 'Clean the nozzle with warm water.'],
      fra: ['Buse de savon obstruée', 'Du savon séché obstrue la buse ; la pompe tourne mais ne distribue rien.', "Nettoyer la buse à l'eau chaude."],
      deu: ['Seifendüse verstopft', 'Eingetrocknete Seife verstopft die Düse; die Pumpe läuft, gibt aber nichts aus.', 'Düse mit warmem Wasser reinigen.'],
      nld: ['Zeeptuit verstopt', 'Opgedroogde zeep verstopt de tuit; de pomp draait maar geeft niets af.', 'Reinig de tuit met warm water.'],
      spa: ['Boquilla de jabón obstruida', 'El jabón seco obstruye la boquilla; la bomba funciona pero no dispensa nada.', 'Limpiar la boquilla con agua caliente.']
    }
  },
  {
    code: 'SOAP_WRONG_REFILL',
    category: 'alert',
    texts: {
      eng: ['Unrecognised refill', 'The inserted cartridge is not a compatible refill.', 'Replace it with an approved refill cartridge.'],
      fra: ['Recharge non reconnue', "La cartouche insérée n'est pas une recharge compatible.", 'La remplacer par une cartouche de recharge homologuée.'],
      deu: ['Nachfüllung nicht erkannt', 'Die eingesetzte Kartusche ist keine kompatible Nachfüllung.', 'Durch eine zugelassene Nachfüllkartusche ersetzen.'],
      nld: ['Navulling niet herkend', 'De geplaatste patroon is geen compatibele navulling.', 'Vervang deze door een goedgekeurde navulpatroon.'],
      spa: ['Recarga no reconocida', 'El cartucho colocado no es una recarga compatible.', 'Sustituirlo por un cartucho de recarga homologado.']
    }
  },
  {
    code: 'PC_SENSOR_BLOCKED',
    category: 'alert',
    texts: {
      eng: ['Counter sensor obstructed', "Something blocks the sensor's field of view, so people are not counted.", 'Remove the obstruction in front of the sensor.'],
      fra: ['Capteur de comptage obstrué', 'Un objet masque le champ de vision du capteur ; les personnes ne sont pas comptées.', "Retirer l'obstacle devant le capteur."],
      deu: ['Zählsensor verdeckt', 'Etwas verdeckt das Sichtfeld des Sensors, daher werden keine Personen gezählt.', 'Das Hindernis vor dem Sensor entfernen.'],
      nld: ['Telsensor geblokkeerd', 'Iets blokkeert het zichtveld van de sensor, waardoor er geen mensen worden geteld.', 'Verwijder het obstakel voor de sensor.'],
      spa: ['Sensor de conteo obstruido', 'Algo bloquea el campo de visión del sensor y no se cuentan las personas.', 'Retirar el obstáculo delante del sensor.']
    }
  },
  {
    code: 'CM_BRUSH_BLOCKED',
    category: 'alert',
    texts: {
      eng: ['Brush blocked', 'A cable, cloth or debris is wrapped around the brush.', 'Switch the machine off, remove the debris and check the brush for damage.'],
      fra: ['Brosse bloquée', 'Un câble, un chiffon ou des débris sont enroulés autour de la brosse.', "Éteindre la machine, retirer les débris et vérifier que la brosse n'est pas endommagée."],
      deu: ['Bürste blockiert', 'Ein Kabel, ein Tuch oder Schmutz hat sich um die Bürste gewickelt.', 'Maschine ausschalten, Fremdkörper entfernen und Bürste auf Schäden prüfen.'],
      nld: ['Borstel geblokkeerd', 'Er zit een kabel, doek of vuil om de borstel gewikkeld.', 'Schakel de machine uit, verwijder het vuil en controleer de borstel op schade.'],
      spa: ['Cepillo bloqueado', 'Un cable, un trapo o suciedad se ha enrollado en el cepillo.', 'Apagar la máquina, retirar la suciedad y comprobar que el cepillo no esté dañado.']
    }
  },
  {
    code: 'CM_WATER_TANK_EMPTY',
    category: 'alert',
    texts: {
      eng: ['Clean water tank empty', 'The scrubber has used up its clean water.', 'Refill the clean water tank with water and detergent.'],
      fra: ["Réservoir d'eau propre vide", "L'autolaveuse a épuisé son eau propre.", "Remplir le réservoir d'eau propre avec de l'eau et du détergent."],
      deu: ['Frischwassertank leer', 'Die Scheuersaugmaschine hat ihr Frischwasser verbraucht.', 'Frischwassertank mit Wasser und Reinigungsmittel befüllen.'],
      nld: ['Schoonwatertank leeg', 'De schrobmachine heeft al het schone water verbruikt.', 'Vul de schoonwatertank met water en reinigingsmiddel.'],
      spa: ['Depósito de agua limpia vacío', 'La fregadora ha agotado el agua limpia.', 'Llenar el depósito de agua limpia con agua y detergente.']
    }
  },
  {
    code: 'CM_DIRTY_WATER_FULL',
    category: 'alert',
    texts: {
      eng: ['Recovery tank full', 'The dirty water tank is full; the scrubber stopped suction.', 'Empty and rinse the recovery tank.'],
      fra: ["Réservoir d'eau sale plein", "Le réservoir d'eau sale est plein ; l'autolaveuse a arrêté l'aspiration.", "Vider et rincer le réservoir d'eau sale."],
      deu: ['Schmutzwassertank voll', 'Der Schmutzwassertank ist voll; die Maschine hat das Absaugen eingestellt.', 'Schmutzwassertank entleeren und ausspülen.'],
      nld: ['Vuilwatertank vol', 'De vuilwatertank is vol; de schrobmachine is gestopt met zuigen.', 'Leeg en spoel de vuilwatertank.'],
      spa: ['Depósito de agua sucia lleno', 'El depósito de agua sucia está lleno; la fregadora ha dejado de aspirar.', 'Vaciar y enjuagar el depósito de agua sucia.']
    }
  },
  {
    code: 'CM_DUSTBIN_FULL',
    category: 'alert',
    texts: {
      eng: ['Dust bin full', "The robot's dust bin is full and suction is reduced.", 'Empty the dust bin and clean the filter.'],
      fra: ['Bac à poussière plein', "Le bac à poussière du robot est plein et l'aspiration est réduite.", 'Vider le bac à poussière et nettoyer le filtre.'],
      deu: ['Staubbehälter voll', 'Der Staubbehälter des Roboters ist voll, die Saugleistung ist reduziert.', 'Staubbehälter leeren und Filter reinigen.'],
      nld: ['Stofbak vol', 'De stofbak van de robot is vol en de zuigkracht is verminderd.', 'Leeg de stofbak en reinig het filter.'],
      spa: ['Depósito de polvo lleno', 'El depósito de polvo del robot está lleno y la aspiración se ha reducido.', 'Vaciar el depósito de polvo y limpiar el filtro.']
    }
  },
  {
    code: 'CM_STUCK',
    category: 'alert',
    texts: {
      eng: ['Robot stuck', 'The robot cannot move on: it is trapped under furniture or has lost its way.', 'Free the robot and put it back on its dock.'],
      fra: ['Robot bloqué', "Le robot ne peut plus avancer : il est coincé sous un meuble ou s'est égaré.", 'Dégager le robot et le replacer sur sa station.'],
      deu: ['Roboter festgefahren', 'Der Roboter kommt nicht weiter: Er steckt unter einem Möbelstück fest oder hat die Orientierung verloren.', 'Roboter befreien und auf die Ladestation zurücksetzen.'],
      nld: ['Robot vast', 'De robot kan niet verder: hij zit klem onder meubilair of is de weg kwijt.', 'Bevrijd de robot en zet hem terug op zijn laadstation.'],
      spa: ['Robot atascado', 'El robot no puede avanzar: está atrapado bajo un mueble o se ha desorientado.', 'Liberar el robot y devolverlo a su base.']
    }
  },
  {
    code: 'DEV_TAMPER_DETECTED',
    category: 'alert',
    texts: {
      eng: ['Tampering detected', 'The device was forced open or removed from its mounting.', 'Inspect the device and its mounting on site.'],
      fra: ['Manipulation détectée', "L'appareil a été ouvert de force ou retiré de son support.", "Inspecter sur place l'appareil et son support."],
      deu: ['Manipulation erkannt', 'Das Gerät wurde gewaltsam geöffnet oder von seiner Halterung entfernt.', 'Gerät und Halterung vor Ort prüfen.'],
      nld: ['Sabotage gedetecteerd', 'Het apparaat is geforceerd geopend of van zijn bevestiging gehaald.', 'Controleer het apparaat en de bevestiging ter plaatse.'],
      spa: ['Manipulación detectada', 'El dispositivo se ha abierto a la fuerza o se ha retirado de su soporte.', 'Inspeccionar el dispositivo y su soporte in situ.']
    }
  },
  {
    code: 'DEV_FIRMWARE_UPDATED',
    category: 'notification',
    texts: {
      eng: ['Firmware updated', 'The device installed a new firmware version and restarted.', NO_ACTION.eng],
      fra: ['Micrologiciel mis à jour', "L'appareil a installé une nouvelle version du micrologiciel et a redémarré.", NO_ACTION.fra],
      deu: ['Firmware aktualisiert', 'Das Gerät hat eine neue Firmware-Version installiert und neu gestartet.', NO_ACTION.deu],
      nld: ['Firmware bijgewerkt', 'Het apparaat heeft een nieuwe firmwareversie geïnstalleerd en is opnieuw opgestart.', NO_ACTION.nld],
      spa: ['Firmware actualizado', 'El dispositivo ha instalado una nueva versión de firmware y se ha reiniciado.', NO_ACTION.spa]
    }
  }
]
