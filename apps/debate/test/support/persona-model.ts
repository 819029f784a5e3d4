/** The stand-in for the models behind the personas: shared with the fleet's demo and tests, where it lives. */
export { personaModel } from '@agora/participants';
